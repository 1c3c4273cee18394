import assert from 'node:assert/strict';
import { eventually } from '../../support/eventually.js';
import type { TestAccount } from '../../support/factories.js';
import type { TestApp } from '../../support/test-app.js';

export const ALT_TASKS = '/v1/alternate/video/tasks';
export const SHARED = '/v1/contents/generations/tasks';

export interface AltTask {
  id: string;
  model: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  mode: string;
  kind: string;
  phase?: string;
  outputs: { videos: string[]; images: unknown[]; expiresAt?: string; urlsExpireAt?: string };
  usage: { requestedSeconds: number; outputSeconds?: number; billedSeconds?: number; chargedUsd?: number };
  failureReason?: string;
  createdAt: string;
  updatedAt: string;
}

export async function createAlt(t: TestApp, account: Pick<TestAccount, 'key'>, json: unknown): Promise<{ status: number; body: any }> {
  const response = await t.request(ALT_TASKS, { method: 'POST', key: account.key, json });
  return { status: response.status, body: await response.json() };
}

export async function getAlt(t: TestApp, account: Pick<TestAccount, 'key'>, id: string): Promise<AltTask> {
  const response = await t.request(`${SHARED}/${encodeURIComponent(id)}`, { key: account.key });
  assert.equal(response.status, 200, `GET ${id} answered ${response.status}: ${await response.clone().text()}`);
  return (await response.json()) as AltTask;
}

export function waitForAltTerminal(t: TestApp, account: Pick<TestAccount, 'key'>, id: string, timeoutMs = 60_000): Promise<AltTask> {
  return eventually(() => getAlt(t, account, id), (task) => task.status === 'succeeded' || task.status === 'failed', `task ${id} ending`, timeoutMs);
}

export interface WalletBody {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}

export async function wallet(t: TestApp, account: Pick<TestAccount, 'key'>): Promise<WalletBody> {
  const response = await t.request('/api/svc/v1/wallet', { key: account.key });
  assert.equal(response.status, 200);
  return (await response.json()) as WalletBody;
}

/** Ledger facts of one task: its holds and the capture entries (one capture = charged once). */
export async function ledgerOf(t: TestApp, taskId: string): Promise<{ holds: Array<{ status: string; amount: bigint; captured: bigint }>; captures: number; releases: number }> {
  const holds = await t.db.query<{ status: string; amount_micros: string; captured_micros: string }>(
    `SELECT status, amount_micros, captured_micros FROM hold WHERE subject_type = 'alternate_task' AND subject_id = $1`,
    [taskId],
  );
  const entries = await t.db.query<{ kind: string }>(
    `SELECT l.kind FROM ledger_entry l JOIN hold h ON h.id = l.hold_id WHERE h.subject_type = 'alternate_task' AND h.subject_id = $1`,
    [taskId],
  );
  return {
    holds: holds.map((h) => ({ status: h.status, amount: BigInt(h.amount_micros), captured: BigInt(h.captured_micros) })),
    captures: entries.filter((e) => e.kind === 'capture').length,
    releases: entries.filter((e) => e.kind === 'release').length,
  };
}

export async function rowCount(t: TestApp, apiKeyId: string): Promise<number> {
  const rows = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM alternate_task WHERE api_key_id = $1`, [apiKeyId]);
  return Number(rows[0]!.n);
}

export async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `download answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

export const isMp4 = (bytes: Buffer): boolean => bytes.subarray(4, 8).toString('latin1') === 'ftyp';

/** Two callback secrets (rotation): both accepted; ALTERNATE_CALLBACK_SECRETS lists them comma-separated. */
export const SECRET_A = `whsec_${Buffer.from('alternate-secret-a-0123456789abcdef').toString('base64')}`;
export const SECRET_B = `whsec_${Buffer.from('alternate-secret-b-0123456789abcdef').toString('base64')}`;
export const SECRET_UNKNOWN = `whsec_${Buffer.from('nobody-knows-this-secret-0123456789').toString('base64')}`;

/** The app's environment for the live `kling` adapter pointed at a fake. */
export function klingEnv(fake: { baseUrl: string; accessKey: string; secretKey: string }): Record<string, string> {
  return {
    KLING_ACCESS_KEY: fake.accessKey,
    KLING_SECRET_KEY: fake.secretKey,
    KLING_BASE_URL: fake.baseUrl,
    ALTERNATE_CALLBACK_SECRETS: `${SECRET_A},${SECRET_B}`,
  };
}

export async function rowOf(t: TestApp, id: string): Promise<{ status: string; phase: string | null; upstream_task_id: string | null; media_key: string | null }> {
  const rows = await t.db.query<{ status: string; phase: string | null; upstream_task_id: string | null; media_key: string | null }>(
    `SELECT status, phase, upstream_task_id, media_key FROM alternate_task WHERE id = $1`,
    [id],
  );
  return rows[0]!;
}

export async function storedObjects(t: TestApp, id: string): Promise<number> {
  const rows = await t.db.query(`SELECT 1 FROM media_object WHERE key LIKE $1 AND deleted_at IS NULL`, [`alternate/%/${id.slice(4)}.mp4`]);
  return rows.length;
}
