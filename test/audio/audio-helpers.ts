import assert from 'node:assert/strict';
import { SANDBOX_VOICES, type VoiceInfo } from '../../libs/providers/index.js';
import { eventually } from '../support/eventually.js';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

export const GENERATIONS = '/v1/audio/generations';

export interface AudioTaskBody {
  id: string;
  model: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';
  outputs: { audios: Array<{ url: string; contentType: string; bytes: number; expiresAt: string }> };
  usage: { inputCharacters: number; billableCharacters: number; chargedUsd: number };
  phase?: string;
  failureReason?: string;
  createdAt: string;
  updatedAt: string;
}

/** Usable sandbox voices that speak `model`. */
export function voicesFor(model: string): VoiceInfo[] {
  const voices = SANDBOX_VOICES.filter((v) => v.status === 'available' && v.standardRate && v.models.includes(model as never));
  assert.ok(voices.length >= 2, `the sandbox has two voices for ${model}`);
  return voices;
}

export const speechBody = (extra: Record<string, unknown> = {}, model = 'voice_v4'): Record<string, unknown> => ({
  model,
  mode: 'text_to_speech',
  prompt: 'Hello from the audio tests.',
  controls: { voiceId: voicesFor(model)[0]!.id },
  ...extra,
});

export async function createAudio(
  t: TestApp,
  account: Pick<TestAccount, 'key'>,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await t.request(GENERATIONS, { method: 'POST', key: account.key, json, headers });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

export async function getAudio(t: TestApp, account: Pick<TestAccount, 'key'>, id: string, prefix = '/v1'): Promise<AudioTaskBody> {
  const response = await t.request(`${prefix}/audio/generations/${encodeURIComponent(id)}`, { key: account.key });
  assert.equal(response.status, 200, `GET ${id} answered ${response.status}: ${await response.clone().text()}`);
  return (await response.json()) as AudioTaskBody;
}

/** Polls the task as a client would until it is terminal. */
export function waitForAudio(t: TestApp, account: Pick<TestAccount, 'key'>, id: string, timeoutMs = 60_000): Promise<AudioTaskBody> {
  return eventually(() => getAudio(t, account, id), (task) => ['succeeded', 'failed', 'cancelled'].includes(task.status), `audio task ${id} ending`, timeoutMs);
}

/** Ledger facts of one task: its holds, and the sums of captures and releases of its hold. */
export async function ledgerOf(t: TestApp, taskId: string): Promise<{ holds: number; status: string; amount: bigint; captured: bigint; released: bigint; captures: number }> {
  const holds = await t.db.query<{ id: string; status: string; amount_micros: string }>(
    `SELECT id, status, amount_micros FROM hold WHERE subject_type = 'audio_task' AND subject_id = $1`,
    [taskId],
  );
  assert.ok(holds.length >= 1, `no hold for ${taskId}`);
  const [sums] = await t.db.query<{ captured: string; released: string; captures: string }>(
    `SELECT coalesce(sum(amount_micros) FILTER (WHERE kind = 'capture'), 0) AS captured,
            coalesce(sum(amount_micros) FILTER (WHERE kind = 'release'), 0) AS released,
            count(*) FILTER (WHERE kind = 'capture') AS captures
       FROM ledger_entry WHERE hold_id = $1`,
    [holds[0]!.id],
  );
  return {
    holds: holds.length,
    status: holds[0]!.status,
    amount: BigInt(holds[0]!.amount_micros),
    captured: abs(BigInt(sums!.captured)),
    released: abs(BigInt(sums!.released)),
    captures: Number(sums!.captures),
  };
}

const abs = (n: bigint): bigint => (n < 0n ? -n : n);

/** What a refused request must leave untouched: the wallet answer, ledger entries, holds, tasks, jobs. */
export async function footprint(t: TestApp, account: TestAccount): Promise<unknown> {
  const wallet = await (await t.request('/api/svc/v1/wallet', { key: account.key })).json();
  const [counts] = await t.db.query<{ ledger: string; holds: string; tasks: string; keys: string }>(
    `SELECT (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1) AS ledger,
            (SELECT count(*) FROM hold WHERE workspace_id = $1) AS holds,
            (SELECT count(*) FROM audio_task WHERE workspace_id = $1) AS tasks,
            (SELECT count(*) FROM audio_idempotency WHERE api_key_id = $2) AS keys`,
    [account.workspaceId, account.keyId],
  );
  return { wallet, ...counts };
}

/** Downloads an audio link: 200 and the bytes. */
export async function download(url: string): Promise<{ bytes: Buffer; contentType: string | null }> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `download answered ${response.status}`);
  return { bytes: Buffer.from(await response.arrayBuffer()), contentType: response.headers.get('content-type') };
}
