import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { anyModelVoice } from '../audio/support/speech-stream-helpers.js';

export const SESSIONS = '/v1/audio/realtime/sessions';

export interface SessionBody {
  sessionId: string;
  url: string;
  token: string;
  tokenExpiresAt: string;
  expiresAt: string;
  inputMode: string;
  status: string;
  connected: boolean;
  model: string;
  controls: { voiceId: string; outputFormat: string };
  budget: { maxCostUsd: number; allocatedUsd: number; remainingUsd: number };
  createdAt: string;
  closedAt?: string;
}

export const sessionBody = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'voice_v4',
  controls: { voiceId: anyModelVoice() },
  ...extra,
});

export async function createSession(t: TestApp, account: Pick<TestAccount, 'key'>, json: unknown = sessionBody()): Promise<{ status: number; body: any }> {
  const response = await t.request(SESSIONS, { method: 'POST', key: account.key, json });
  return { status: response.status, body: await response.json() };
}

/** Creates a session and asserts 200. */
export async function openSession(t: TestApp, account: Pick<TestAccount, 'key'>, json: unknown = sessionBody()): Promise<SessionBody> {
  const { status, body } = await createSession(t, account, json);
  assert.equal(status, 200, JSON.stringify(body));
  return body as SessionBody;
}

export async function newTicket(t: TestApp, account: Pick<TestAccount, 'key'>, sessionId: string): Promise<{ token: string; url: string; tokenExpiresAt: string }> {
  const response = await t.request(`${SESSIONS}/${encodeURIComponent(sessionId)}/tickets`, { method: 'POST', key: account.key });
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as { token: string; url: string; tokenExpiresAt: string };
}

export type Frame = Record<string, any> & { type: string };

/**
 * A `ws` client that records every frame and the close. `next(type)` waits for the next frame not
 * yet taken (of that type, skipping none: a frame of another type first fails the wait).
 */
export class RealtimeClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;
  private taken = 0;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'the server sends text frames only');
      this.frames.push(JSON.parse(data.toString()) as Frame);
      this.wake();
    });
    ws.on('close', () => this.wake());
    ws.on('error', () => undefined);
  }

  static connect(url: string): RealtimeClient {
    return new RealtimeClient(new WebSocket(url));
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  authenticate(token: string): void {
    this.send({ type: 'session.authenticate', token });
  }

  /** The next frame; fails when the socket closes first or after `timeoutMs`. */
  async next(type?: string, timeoutMs = 30_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    while (this.taken >= this.frames.length) {
      if (this.ws.readyState === WebSocket.CLOSED) assert.fail(`closed (${JSON.stringify(await this.closed)}) while waiting for ${type ?? 'a frame'}; frames: ${JSON.stringify(this.frames.map((f) => f.type))}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no ${type ?? 'frame'} within ${timeoutMs} ms; frames: ${JSON.stringify(this.frames.map((f) => f.type))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const frame = this.frames[this.taken++]!;
    if (type !== undefined) assert.equal(frame.type, type, `expected ${type}, got ${JSON.stringify(frame).slice(0, 300)}`);
    return frame;
  }

  /** Frames up to and including the first of one of `types` (audio deltas in between). */
  async until(types: string[], timeoutMs = 60_000): Promise<Frame[]> {
    const seen: Frame[] = [];
    for (;;) {
      const frame = await this.next(undefined, timeoutMs);
      seen.push(frame);
      if (types.includes(frame.type)) return seen;
    }
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close(1000);
    return this.closed;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** Connects with the session's ticket and waits for `session.ready`. */
export async function connectReady(url: string, token: string): Promise<{ client: RealtimeClient; ready: Frame }> {
  const client = RealtimeClient.connect(url);
  await client.opened;
  client.authenticate(token);
  const ready = await client.next('session.ready');
  return { client, ready };
}
