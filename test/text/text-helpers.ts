import OpenAI from 'openai';
import { after, before } from 'node:test';
import { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import { type FundedApp, type FundedAppOptions, fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';

export const MODELS = ['vendor-3.8-flash', 'vendor-3.7-flash', 'vendor-3.5-flash-lite'] as const;

/** The official SDK pointed at the booted app, as a client would do it (no retries: tests see every status). */
export function openaiFor(t: TestApp, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${t.baseUrl}/api/svc/v1`, maxRetries: 0 });
}

/** `fundedAppForSuite` for the text suites: the app, a funded account and an SDK client for its key. */
export function openaiSuite(options: FundedAppOptions, ready: (booted: FundedApp & { client: OpenAI }) => void): void {
  fundedAppForSuite(options, (booted) => ready({ ...booted, client: openaiFor(booted.t, booted.account.key) }));
}

/** `fundedAppForSuite` with the live text adapter credentialled against a FakeGeminiServer started first. */
export function fakeGeminiSuite(options: FundedAppOptions, ready: (booted: FundedApp & { fake: FakeGeminiServer }) => void): void {
  const fake = new FakeGeminiServer();
  before(async () => {
    await fake.start();
  });
  fundedAppForSuite(
    () => ({ ...options, env: { ...options.env, GEMINI_API_KEY: 'fake-gemini-key', GEMINI_BASE_URL: fake.url } }),
    (booted) => ready({ ...booted, fake }),
  );
  after(async () => {
    await fake.stop();
  });
}

export interface HoldRow {
  status: string;
  amount_micros: string;
  captured_micros: string;
  subject_id: string;
}

/** The text holds of a workspace, oldest first, and the ledger sums that must hold for each. */
export async function textHolds(t: TestApp, workspaceId: string): Promise<HoldRow[]> {
  const rows: Array<Record<string, string>> = await t.db.query(
    `SELECT h.id, h.status, h.amount_micros::text AS amount_micros, h.captured_micros::text AS captured_micros, h.subject_id
       FROM hold h WHERE h.workspace_id = $1 AND h.subject_type = 'text' ORDER BY h.created_at, h.id`,
    [workspaceId],
  );
  return rows as unknown as HoldRow[];
}

export async function walletRow(t: TestApp, workspaceId: string): Promise<{ balance: bigint; held: bigint }> {
  const rows: Array<{ balance_micros: string; held_micros: string }> = await t.db.query(
    `SELECT balance_micros::text, held_micros::text FROM wallet WHERE workspace_id = $1 AND environment = 'live'`,
    [workspaceId],
  );
  return { balance: BigInt(rows[0]!.balance_micros), held: BigInt(rows[0]!.held_micros) };
}

export const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'unit', 'days'],
      additionalProperties: false,
    },
  },
};
