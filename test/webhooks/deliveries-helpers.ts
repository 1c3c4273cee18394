import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Stripe from 'stripe';
import { Queues } from '../../src/queue/queues.js';
import { createAudio, speechBody, waitForAudio } from '../audio/audio-helpers.js';
import { eventually } from '../support/eventually.js';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { endpointPath } from './endpoints-helpers.js';

/** What a receiver saw of one POST. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** How the receiver answers one request: a status (and headers, body), hang (never answer), or drop the connection. */
export type ReceiverAction = { status: number; headers?: Record<string, string>; body?: string } | 'hang' | 'drop';

/**
 * A real local HTTP receiver. `answer` decides per request (by its index, 0-based); it defaults to 200.
 * Every request is recorded with its exact raw body.
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (index: number, request: Received) => ReceiverAction = () => ({ status: 200, body: 'ok' });
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
    const index = this.received.push(request) - 1;
    const action = this.answer(index, request);
    if (action === 'hang') return;
    if (action === 'drop') {
      req.socket.destroy();
      return;
    }
    res.writeHead(action.status, action.headers ?? {});
    res.end(action.body ?? '');
  }
}

/** A receiver's verification by hand (docs/webhooks.md): HMAC-SHA256 hex over `t.body`, constant-time, five-minute tolerance. */
export function verifyByHand(body: string, header: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000), toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Stripe's own verifier, with our header passed as the signature header. Throws when it does not verify. */
export function verifyWithStripe(body: string, header: string, secret: string, toleranceSeconds = 300): { id: string; type: string } {
  return new Stripe('sk_test_unused').webhooks.constructEvent(body, header, secret, toleranceSeconds) as unknown as { id: string; type: string };
}

export const signatureTime = (request: Received): number => Number(/t=(\d+)/.exec(String(request.headers['x-svc-signature']))![1]);

/** Creates a speech task (sandbox) that names the endpoint and waits until it is terminal. */
export async function terminalTask(t: TestApp, account: TestAccount, endpointId: string, prompt = 'Hello webhooks.'): Promise<{ id: string; status: string; usage: unknown; model: string }> {
  const created = await createAudio(t, account, speechBody({ prompt, webhookEndpointId: endpointId }));
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return waitForAudio(t, account, created.body.id as string);
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
}

export async function deliveriesOfTask(t: TestApp, taskId: string): Promise<Array<DeliveryRow & { type: string; payload: string }>> {
  return t.db.query(
    `SELECT d.*, e.type, e.payload FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id WHERE e.task_id = $1 ORDER BY e.created_at`,
    [taskId],
  );
}

export async function attemptsOf(t: TestApp, deliveryId: string): Promise<Array<{ attempt: number; manual: boolean; status_code: number | null; error: string | null; duration_ms: number }>> {
  return t.db.query(`SELECT attempt, manual, status_code, error, duration_ms FROM webhook_delivery_attempt WHERE delivery_id = $1 ORDER BY attempt`, [deliveryId]);
}

/** Waits until the task's one delivery satisfies `done` (the worker moves it). */
export async function waitForDelivery(t: TestApp, taskId: string, done: (row: DeliveryRow) => boolean, what: string, timeoutMs = 30_000): Promise<DeliveryRow & { type: string; payload: string }> {
  const rows = await eventually(() => deliveriesOfTask(t, taskId), (found) => found.length === 1 && done(found[0]!), what, timeoutMs);
  return rows[0]!;
}

/** Runs a delivery's delayed job now (the test moved the clock to its next attempt). */
export async function promoteDelivery(t: TestApp, deliveryId: string): Promise<void> {
  const job = await eventually(() => t.app.get(Queues).getJob('webhooks', deliveryId), (found) => found !== undefined, `job of ${deliveryId}`);
  await eventually(() => job!.getState(), (state) => state === 'delayed', `job of ${deliveryId} delayed`);
  await job!.promote();
}

export async function listDeliveries(t: TestApp, account: Pick<TestAccount, 'key'>, endpointId: string, query = ''): Promise<{ status: number; body: any }> {
  const answer = await t.request(endpointPath(endpointId, `/deliveries${query}`), { key: account.key });
  return { status: answer.status, body: await answer.json() };
}

export function retryDelivery(t: TestApp, account: Pick<TestAccount, 'key'>, endpointId: string, deliveryId: string): Promise<Response> {
  return t.request(endpointPath(endpointId, `/deliveries/${encodeURIComponent(deliveryId)}/retry`), { method: 'POST', key: account.key });
}

/** Waits until `n` attempts of the delivery are recorded (outcome and all), and returns them. */
export function waitForAttempts(t: TestApp, deliveryId: string, n: number, timeoutMs = 30_000): ReturnType<typeof attemptsOf> {
  return eventually(() => attemptsOf(t, deliveryId), (found) => found.length >= n, `${n} attempts of ${deliveryId}`, timeoutMs);
}

/** The state of the delivery's job in BullMQ (`completed` once it ended; `delayed` while waiting for the next attempt). */
export async function jobState(t: TestApp, deliveryId: string): Promise<string> {
  const job = await t.app.get(Queues).getJob('webhooks', deliveryId);
  return job ? job.getState() : 'missing';
}
