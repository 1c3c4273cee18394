import assert from 'node:assert/strict';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

export const ENDPOINTS = '/api/svc/v1/webhook-endpoints';
export const SUCCEEDED = 'audio.generation.succeeded';
export const FAILED = 'audio.generation.failed';

export interface EndpointBody {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: string;
}

export interface EndpointRow {
  id: string;
  api_key_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret_sealed: string;
  created_at: Date;
  updated_at: Date;
}

type Caller = Pick<TestAccount, 'key'>;

export const endpointPath = (id: string, tail = ''): string => `${ENDPOINTS}/${encodeURIComponent(id)}${tail}`;

export const createEndpointRaw = (t: TestApp, account: Caller, json: unknown): Promise<Response> => t.request(ENDPOINTS, { method: 'POST', key: account.key, json });

/** Creates an endpoint and checks the 201 answer's shape: `{id, secret}` only. */
export async function createEndpoint(t: TestApp, account: Caller, json: unknown = { url: 'https://example.com/hooks', events: [SUCCEEDED] }): Promise<{ id: string; secret: string }> {
  const answer = await createEndpointRaw(t, account, json);
  const body = (await answer.json()) as { id: string; secret: string };
  assert.equal(answer.status, 201, JSON.stringify(body));
  assert.deepEqual(Object.keys(body).sort(), ['id', 'secret']);
  assert.match(body.id, /^webhook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.match(body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  return body;
}

export async function listEndpoints(t: TestApp, account: Caller): Promise<EndpointBody[]> {
  const answer = await t.request(ENDPOINTS, { key: account.key });
  const body = (await answer.json()) as { items: EndpointBody[] };
  assert.equal(answer.status, 200, JSON.stringify(body));
  assert.deepEqual(Object.keys(body), ['items']);
  return body.items;
}

export async function endpointRows(t: TestApp, apiKeyId?: string): Promise<EndpointRow[]> {
  return apiKeyId === undefined
    ? t.db.query<EndpointRow>('SELECT * FROM webhook_endpoint ORDER BY created_at, id')
    : t.db.query<EndpointRow>('SELECT * FROM webhook_endpoint WHERE api_key_id = $1 ORDER BY created_at, id', [apiKeyId]);
}

/** The error envelope: status, code, a non-empty message; returns the message. */
export async function assertError(answer: Response, status: number, code: string): Promise<string> {
  const body = (await answer.json()) as { error?: { code?: unknown; message?: unknown } };
  assert.equal(answer.status, status, JSON.stringify(body));
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error?.code, code, JSON.stringify(body));
  assert.equal(typeof body.error?.message, 'string');
  assert.ok((body.error?.message as string).length > 0);
  return body.error!.message as string;
}
