import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CommonErrorCode, ErrorDomains, RequestErrorCode } from '../../libs/common/index.js';
import { AUDIO_CONTENT_TYPES } from '../../libs/providers/index.js';
import { AlternateErrorCode } from '../../src/modules/alternate-video/alternate-errors.js';
import { AudioErrorCode } from '../../src/modules/audio/audio-errors.js';
import { VoiceErrorCode } from '../../src/modules/audio/voices/voice-errors.js';
import { ImageErrorCode } from '../../src/modules/images/image-errors.js';
import { MediaErrorCode } from '../../src/modules/media/media-errors.js';
import { RealtimeRestErrorCode } from '../../src/modules/realtime/realtime-errors.js';
import { TextErrorCode } from '../../src/modules/text/text-errors.js';
import { VideoErrorCode } from '../../src/modules/video/video-errors.js';
import { WebhookDeliveryErrorCode } from '../../src/modules/webhooks/webhook-delivery-errors.js';
import { WebhookErrorCode } from '../../src/modules/webhooks/webhook-errors.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/**
 * Issue 16 item 7: /docs/json is complete enough to generate a client from. Every check runs
 * over every path and method of the document, so a new route is checked as soon as it exists.
 */

/** Domains first, then the account's plumbing, operator routes last. */
const TAG_ORDER = ['video', 'alternate video', 'audio', 'realtime', 'text', 'images', 'webhooks', 'wallet', 'media', 'operations', 'admin', 'internal'];

/**
 * The error statuses each route documents: a route absent from this table fails, so a new route
 * needs a decision here. 401 is required on every API-key and admin route besides (below);
 * 413 is listed where the body limit is the large one (TEXT_BODY_LIMIT_BYTES, callbacks).
 */
const ERROR_STATUSES: Record<string, number[]> = {
  'POST /v1/contents/generations/tasks': [400, 401, 402, 503],
  'GET /v1/contents/generations/tasks': [400, 401],
  'GET /v1/contents/generations/tasks/{id}': [401, 404],
  'DELETE /v1/contents/generations/tasks/{id}': [401, 404, 405],
  'DELETE /contents/generations/tasks/{id}': [401, 404, 405],
  'POST /v1/alternate/video/tasks': [400, 401, 402, 403, 404, 413, 429, 502, 503, 504],
  'POST /v1/audio/generations': [400, 401, 402, 404, 409, 429, 503],
  'GET /v1/audio/generations': [400, 401],
  'GET /v1/audio/generations/{id}': [401, 404],
  'POST /v1/audio/estimate': [400, 401, 404, 503],
  'GET /v1/audio/models': [401],
  'GET /api/svc/v1/audio/generations': [400, 401],
  'GET /api/svc/v1/audio/generations/{id}': [401, 404],
  'POST /v1/audio/speech': [400, 401, 402, 404, 409, 429, 503],
  'GET /v1/audio/voice-library': [400, 401, 503],
  'GET /v1/audio/voices': [401],
  'POST /v1/audio/voices/import': [400, 401, 409, 503],
  'DELETE /v1/audio/voices/{voiceIdOrAlias}': [401, 404],
  'POST /v1/audio/realtime/sessions': [400, 401, 409, 503],
  'POST /v1/audio/realtime/sessions/{sessionId}/tickets': [401, 404, 409],
  'GET /v1/audio/realtime/sessions/{sessionId}': [401, 404],
  'DELETE /v1/audio/realtime/sessions/{sessionId}': [401, 404],
  'POST /api/svc/v1/chat/completions': [400, 401, 402, 413, 422, 429, 502, 503, 504],
  'POST /api/svc/v1/responses': [400, 401, 402, 413, 422, 429, 502, 503, 504],
  'GET /api/svc/v1/models': [401],
  'GET /api/svc/v1/models/{id}': [401, 404],
  'POST /api/svc/v1/images/generations': [400, 401, 402, 413, 422, 502, 503],
  'POST /api/svc/v1/webhook-endpoints': [400, 401, 409],
  'GET /api/svc/v1/webhook-endpoints': [401],
  'GET /api/svc/v1/webhook-endpoints/{id}': [401, 404],
  'PATCH /api/svc/v1/webhook-endpoints/{id}': [400, 401, 404],
  'DELETE /api/svc/v1/webhook-endpoints/{id}': [401, 404],
  'POST /api/svc/v1/webhook-endpoints/{id}/rotate-secret': [401, 404],
  'GET /api/svc/v1/webhook-endpoints/{id}/deliveries': [400, 401, 404],
  'POST /api/svc/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry': [401, 404, 409],
  'GET /api/svc/v1/wallet': [401],
  'GET /media/public/{token}': [404, 416],
  'HEAD /media/public/{token}': [404, 416],
  'GET /media/{path}': [403, 404, 416],
  'HEAD /media/{path}': [403, 404, 416],
  'GET /health/live': [],
  'GET /health/ready': [503],
  'GET /metrics': [401],
  'POST /admin/v1/workspaces': [400, 401],
  'GET /admin/v1/workspaces': [400, 401],
  'GET /admin/v1/workspaces/{id}': [401, 404],
  'POST /admin/v1/workspaces/{id}/api-keys': [400, 401, 404],
  'GET /admin/v1/workspaces/{id}/api-keys': [400, 401, 404],
  'POST /admin/v1/api-keys/{keyId}/revoke': [401, 404, 503],
  'POST /admin/v1/workspaces/{id}/wallet/credits': [400, 401, 404, 409],
  'GET /admin/v1/workspaces/{id}/wallet': [400, 401, 404],
  'GET /admin/v1/workspaces/{id}/ledger': [400, 401, 404],
  'GET /admin/v1/tasks': [400, 401],
  'GET /admin/v1/tasks/{taskId}': [401, 404],
  'GET /admin/v1/overview': [401],
  'POST /admin/v1/queue-dashboard/session': [401],
  'GET /admin/v1/webhook-deliveries': [400, 401],
  'GET /admin/v1/webhook-deliveries/{deliveryId}/attempts': [400, 401, 404],
  'POST /admin/v1/webhook-deliveries/{deliveryId}/retry': [401, 404, 409],
  'POST /admin/v1/workspaces/{id}/gcs-prefixes': [400, 401, 404],
  'GET /admin/v1/workspaces/{id}/gcs-prefixes': [400, 401, 404],
  'POST /internal/alternate/callbacks': [401, 413],
};

/** Error responses whose body is not a coded envelope, with why. */
const UNCODED_ERRORS: Record<string, string> = {
  'GET /health/ready 503': "the readiness report (HealthReport) names the dependency that is down; it is terminus's body, not an error envelope",
};

/** Codes of another domain an error response may list, with why. */
const FOREIGN_CODES: Record<string, string[]> = {
  // Spec › Endpoints › Video 5: DELETE of an alternate-provider task, in that provider's envelope.
  'DELETE /v1/contents/generations/tasks/{id} 405': ['provider.operation_not_supported'],
  'DELETE /contents/generations/tasks/{id} 405': ['provider.operation_not_supported'],
};

/** Routes that answer Server-Sent Events when the request asks for a stream. */
const SSE_ROUTES = ['POST /api/svc/v1/chat/completions', 'POST /api/svc/v1/responses'];

/** Every code a domain raises itself (the `*-errors.ts` enums); shared code adds CommonErrorCode under each prefix. */
const DOMAIN_CODES: string[] = [
  ...Object.values(VideoErrorCode),
  ...Object.values(AlternateErrorCode),
  ...Object.values(AudioErrorCode),
  ...Object.values(VoiceErrorCode),
  ...Object.values(RealtimeRestErrorCode),
  ...Object.values(TextErrorCode),
  ...Object.values(ImageErrorCode),
  ...Object.values(WebhookErrorCode),
  ...Object.values(WebhookDeliveryErrorCode),
];

interface MediaType {
  schema?: Schema;
  examples?: Record<string, { value?: Record<string, unknown> }>;
}
interface Schema {
  $ref?: string;
  type?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
}
interface Operation {
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}
interface OpenApiDocument {
  tags?: Array<{ name: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> };
}

/** A body schema a client generator can name: a component, an array of one, a choice of them, or bytes/text. */
function isNamedBody(schema: Schema | undefined): boolean {
  if (!schema) return false;
  if (schema.$ref) return true;
  if (schema.type === 'array') return !!schema.items?.$ref;
  const choice = schema.oneOf ?? schema.anyOf;
  if (choice) return choice.every((s) => !!s.$ref);
  return schema.type === 'string' && !schema.properties;
}

/** The code an example body carries, in either envelope. */
function exampleCode(value: Record<string, unknown> | undefined): unknown {
  const error = value?.error;
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : value?.error_code;
}

describe('OpenAPI completeness (/docs/json)', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let domains: ErrorDomains;
  const operations: Array<{ route: string; method: string; path: string; op: Operation }> = [];

  before(async () => {
    t = await bootTestApp({ label: 'openapi' });
    domains = t.app.get(ErrorDomains);
    const response = await t.request('/docs/json');
    assert.equal(response.status, 200);
    doc = (await response.json()) as OpenApiDocument;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) operations.push({ route: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op });
    }
  });
  after(async () => {
    await t?.close();
  });

  it('lists the tags in client order and puts every route under exactly one of them', () => {
    assert.deepEqual(
      (doc.tags ?? []).map((tag) => tag.name),
      TAG_ORDER,
    );
    for (const { route, op } of operations) {
      assert.equal(op.tags?.length, 1, `${route} has one tag (${op.tags?.join(', ')})`);
      assert.ok(TAG_ORDER.includes(op.tags[0]!), `${route}: tag ${op.tags[0]} is in the order`);
    }
  });

  it('documents the error statuses of the table, and the table covers every route', () => {
    const routes = operations.map((o) => o.route).sort();
    assert.deepEqual(routes, Object.keys(ERROR_STATUSES).sort(), 'ERROR_STATUSES lists exactly the documented routes');
    for (const { route, op } of operations) {
      const documented = Object.keys(op.responses)
        .map(Number)
        .filter((status) => status >= 400)
        .sort((a, b) => a - b);
      assert.deepEqual(documented, ERROR_STATUSES[route], `${route}: error statuses`);
    }
  });

  it('401 with the route domain’s code on every route the API-key or admin guard refuses, and security only there', async () => {
    for (const { route, method, path, op } of operations) {
      // The guard runs before any lookup or validation, so placeholders do for path parameters.
      const response = await t.request(path.replace(/\{[^}]+\}/g, 'x'), { method });
      const body = method === 'HEAD' ? undefined : ((await response.json().catch(() => undefined)) as Record<string, unknown> | undefined);
      const guardCode = `${domains.domainOf(path)}.${CommonErrorCode.Unauthorized}`;
      const refusedByGuard = response.status === 401 && exampleCode(body) === guardCode;
      const schemes = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
      const declared = schemes.includes('api-key') || schemes.includes('admin');
      assert.equal(declared, refusedByGuard, `${route}: security declared (${schemes.join(', ')}) ⇔ answered 401 ${guardCode} without a key (got ${response.status})`);
      if (declared) {
        const examples = op.responses['401']?.content?.['application/json']?.examples ?? {};
        assert.ok(guardCode in examples, `${route}: 401 lists ${guardCode}`);
      }
      for (const scheme of schemes) assert.ok(scheme in doc.components.securitySchemes, `${route}: security scheme ${scheme} is defined`);
    }
  });

  // A shared route answering for another domain describes that in prose (DELETE of an `alt:`
  // task: `provider.operation_not_supported`, spec › Endpoints › Video 5); its examples stay its own.
  it("each error response is the JSON envelope and lists only codes of the route's domain", () => {
    for (const { route, path, op } of operations) {
      const domain = domains.domainOf(path);
      const allowed = new Set<string>([
        ...DOMAIN_CODES.filter((code) => code.startsWith(`${domain}.`)),
        ...Object.values(CommonErrorCode).map((code) => `${domain}.${code}`),
        ...Object.values(MediaErrorCode).map((code) => `${domain}.${code}`),
        ...Object.values(RequestErrorCode),
      ]);
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || `${route} ${status}` in UNCODED_ERRORS) continue;
        const json = response.content?.['application/json'];
        assert.deepEqual(Object.keys(response.content ?? {}), ['application/json'], `${route} ${status}: errors are JSON only`);
        const codes = Object.keys(json?.examples ?? {});
        assert.ok(codes.length > 0, `${route} ${status}: lists its codes as examples`);
        for (const code of codes) {
          assert.ok(allowed.has(code) || FOREIGN_CODES[`${route} ${status}`]?.includes(code), `${route} ${status}: ${code} is not a code of domain "${domain}"`);
          assert.equal(exampleCode(json!.examples![code]!.value), code, `${route} ${status}: the ${code} example carries its code`);
          assert.ok(response.description?.includes(`\`${code}\``), `${route} ${status}: the description names ${code}`);
        }
      }
    }
  });

  it('SSE routes declare text/event-stream and the speech stream its audio content types', () => {
    for (const { route, op } of operations) {
      const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
      const types = success.flatMap(([, response]) => Object.keys(response.content ?? {}));
      assert.equal(types.includes('text/event-stream'), SSE_ROUTES.includes(route), `${route}: text/event-stream ⇔ SSE route (${types.join(', ')})`);
    }
    const speech = operations.find((o) => o.route === 'POST /v1/audio/speech')!;
    assert.deepEqual(Object.keys(speech.op.responses['200']?.content ?? {}).sort(), Object.values(AUDIO_CONTENT_TYPES).sort());
  });

  it('the shared task endpoint names every answer it gives: omni and alt: tasks, and both error envelopes of DELETE', () => {
    const refsOf = (schema: any): string[] => (schema?.oneOf ?? []).map((item: { $ref: string }) => item.$ref.split('/').pop());
    const tasks = '/v1/contents/generations/tasks';
    const get = doc.paths[`${tasks}/{id}`]!.get!.responses['200']!.content!['application/json']!.schema;
    assert.deepEqual(refsOf(get), ['VideoTaskResponseDto', 'AlternateTaskResponseDto']);
    const page = doc.paths[tasks]!.get!.responses['200']!.content!['application/json']!.schema as { $ref: string };
    const items = (doc.components.schemas[page.$ref.split('/').pop()!] as any).properties.items.items;
    assert.deepEqual(refsOf(items), ['VideoTaskResponseDto', 'AlternateTaskResponseDto']);
    for (const path of [`${tasks}/{id}`, '/contents/generations/tasks/{id}']) {
      const refused = doc.paths[path]!.delete!.responses['405']!.content!['application/json']!.schema;
      assert.deepEqual(refsOf(refused), ['ErrorEnvelopeDto', 'AlternateErrorEnvelopeDto'], path);
    }
  });

  it('request and response bodies are named components, and every $ref resolves', () => {
    for (const { route, op } of operations) {
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        assert.ok(media.schema?.$ref, `${route}: request body ${type} is a named component`);
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          assert.ok(isNamedBody(media.schema), `${route} ${status} ${type}: body is a named component (${JSON.stringify(media.schema).slice(0, 80)})`);
        }
      }
    }
    const refs = JSON.stringify(doc).match(/"#\/components\/schemas\/[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const name = ref.slice('"#/components/schemas/'.length, -1);
      assert.ok(name in doc.components.schemas, `${ref} resolves`);
    }
  });
});
