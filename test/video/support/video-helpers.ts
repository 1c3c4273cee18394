import assert from 'node:assert/strict';
import { eventually } from '../../support/eventually.js';
import type { TestAccount } from '../../support/factories.js';
import type { TestApp } from '../../support/test-app.js';

export interface TaskBody {
  id: string;
  model: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  phase?: string;
  outputs: { videos: string[]; images: unknown[]; expiresAt?: string; urlsExpireAt?: string };
  createdAt: string;
  updatedAt: string;
  failureReason?: string;
}

export interface WalletBody {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}

export const TASKS = '/v1/contents/generations/tasks';

export async function createTask(t: TestApp, account: Pick<TestAccount, 'key'>, json: unknown): Promise<{ status: number; body: any }> {
  const response = await t.request(TASKS, { method: 'POST', key: account.key, json });
  return { status: response.status, body: await response.json() };
}

export async function wallet(t: TestApp, account: Pick<TestAccount, 'key'>): Promise<WalletBody> {
  const response = await t.request('/api/svc/v1/wallet', { key: account.key });
  assert.equal(response.status, 200);
  return (await response.json()) as WalletBody;
}

export async function getTask(t: TestApp, account: Pick<TestAccount, 'key'>, id: string): Promise<TaskBody> {
  const response = await t.request(`${TASKS}/${encodeURIComponent(id)}`, { key: account.key });
  assert.equal(response.status, 200, `GET ${id} answered ${response.status}: ${await response.clone().text()}`);
  return (await response.json()) as TaskBody;
}

/** Polls the task as a client would until it is terminal. */
export function waitForTerminal(t: TestApp, account: Pick<TestAccount, 'key'>, id: string, timeoutMs = 60_000): Promise<TaskBody> {
  return eventually(() => getTask(t, account, id), (task) => task.status === 'succeeded' || task.status === 'failed', `task ${id} ending`, timeoutMs);
}

/** Ledger facts of one task's hold: exactly one hold, and what was captured / released. */
export async function holdOf(t: TestApp, taskId: string): Promise<{ status: string; amount: bigint; captured: bigint; holds: number }> {
  const rows = await t.db.query<{ status: string; amount_micros: string; captured_micros: string }>(
    `SELECT status, amount_micros, captured_micros FROM hold WHERE subject_type = 'video_task' AND subject_id = $1`,
    [taskId],
  );
  assert.ok(rows.length >= 1, `no hold for ${taskId}`);
  return { status: rows[0]!.status, amount: BigInt(rows[0]!.amount_micros), captured: BigInt(rows[0]!.captured_micros), holds: rows.length };
}

/** Downloads a video link and checks it is an MP4 with a movie header. */
export async function download(url: string): Promise<Buffer> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `download answered ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}
