import assert from 'node:assert/strict';
import { StaticPriceCatalogue } from '../../../src/modules/billing/price-catalogue.js';
import type { TestAccount } from '../../support/factories.js';
import { eventually } from '../../support/eventually.js';
import type { TestApp } from '../../support/test-app.js';
import { usableVoices } from '../voices-helpers.js';

export const SPEECH_PATH = '/v1/audio/speech';

/** A sandbox voice that speaks every audio model. */
export function anyModelVoice(): string {
  const voice = usableVoices().find((v) => v.models.includes('voice_v3') && v.models.includes('voice_v4') && v.models.includes('voice_v4_turbo'));
  assert.ok(voice, 'the sandbox has a voice of every model');
  return voice.id;
}

/** What the default catalogue charges for `characters` billable characters of `model`. */
export function speechListCost(model: 'voice_v3' | 'voice_v4' | 'voice_v4_turbo', characters: number): bigint {
  return new StaticPriceCatalogue().speechCost({ workspaceId: 'any', apiKeyId: 'any', environment: 'test' }, model, characters);
}

export function speak(t: TestApp, account: TestAccount, body: unknown, options: { idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<Response> {
  const headers: Record<string, string> = options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey };
  return t.request(SPEECH_PATH, { method: 'POST', json: body, key: account.key, headers, signal: options.signal });
}

export interface AudioTaskRow {
  id: string;
  status: string;
  phase: string | null;
  media_key: string | null;
  billable_characters: number | null;
  charged_micros: string | null;
  hold_id: string;
  failure_reason: string | null;
}

export async function taskRow(t: TestApp, id: string): Promise<AudioTaskRow> {
  const [row] = await t.db.query<AudioTaskRow>('SELECT * FROM audio_task WHERE id = $1', [id]);
  assert.ok(row, `task ${id} exists`);
  return row;
}

export const waitForTaskStatus = (t: TestApp, id: string, done: (row: AudioTaskRow) => boolean, what: string, timeoutMs = 60_000): Promise<AudioTaskRow> =>
  eventually(() => taskRow(t, id), done, what, timeoutMs);

export const terminal = (row: AudioTaskRow): boolean => ['succeeded', 'failed', 'cancelled'].includes(row.status);

export interface HoldLedger {
  holds: number;
  status: string;
  amount: bigint;
  capture: bigint;
  release: bigint;
  /** Ledger entries of each kind (a settled hold has one capture and one release entry at most). */
  entries: Record<string, number>;
}

/** The task's hold(s) and their ledger entries. */
export async function holdLedger(t: TestApp, taskId: string): Promise<HoldLedger> {
  const holds = await t.db.query<{ id: string; status: string; amount_micros: string }>(`SELECT id, status, amount_micros FROM hold WHERE subject_type = 'audio_task' AND subject_id = $1`, [taskId]);
  assert.ok(holds.length >= 1, `no hold for ${taskId}`);
  const entries = await t.db.query<{ kind: string; amount_micros: string }>(`SELECT kind, amount_micros FROM ledger_entry WHERE hold_id = $1`, [holds[0]!.id]);
  const sum = (kind: string) => entries.filter((e) => e.kind === kind).reduce((total, e) => total + BigInt(e.amount_micros), 0n);
  const counts: Record<string, number> = {};
  for (const e of entries) counts[e.kind] = (counts[e.kind] ?? 0) + 1;
  return { holds: holds.length, status: holds[0]!.status, amount: BigInt(holds[0]!.amount_micros), capture: sum('capture'), release: sum('release'), entries: counts };
}

/** The task as the client polls it. */
export async function pollTask(t: TestApp, account: TestAccount, id: string): Promise<any> {
  const answer = await t.request(`/v1/audio/generations/${encodeURIComponent(id)}`, { key: account.key });
  assert.equal(answer.status, 200);
  return answer.json();
}

/** Downloads the task's one stored audio through its signed link. */
export async function storedAudio(t: TestApp, account: TestAccount, id: string): Promise<Buffer> {
  const task = await pollTask(t, account, id);
  assert.equal(task.outputs.audios.length, 1, JSON.stringify(task));
  const answer = await fetch(task.outputs.audios[0].url);
  assert.equal(answer.status, 200);
  return Buffer.from(await answer.arrayBuffer());
}

/** Reads a body chunk by chunk as it arrives; `onChunk` runs after each (e.g. to look at the task meanwhile). */
export async function readChunks(response: Response, onChunk?: (index: number) => Promise<void>): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(Buffer.from(value));
    await onChunk?.(chunks.length - 1);
  }
}
