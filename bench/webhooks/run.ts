// Webhook delivery benchmark (issue 12): signed deliveries per second from one worker to a local
// receiver that answers at once, event→receipt latency, and the same with 10% of the deliveries
// going to a receiver that never answers (cut at WEBHOOK_DELIVERY_TIMEOUT_MS).
//   1. backlog: BENCH_DELIVERIES events are written through the real outbox (the AudioTaskEvents
//      listener, one transaction each, job enqueued after commit) while no worker runs; then one
//      worker starts and drains them: deliveries/s from its start to the last receipt;
//   2. steady: with the worker running, BENCH_STEADY events at BENCH_RATE per second: p50/p99 from
//      the event's createdAt to the receiver reading the request;
//   3. both again with every tenth event for an endpoint whose receiver never answers.
// BENCH_CONCURRENCY sets WEBHOOK_DELIVERY_CONCURRENCY (default: the configured default).
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:webhooks (builds into dist/ first).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { inTransaction } from '../../src/database/transaction.js';
import { WebhookDeliveryRepository } from '../../src/modules/webhooks/webhook-delivery.repository.js';
import { WebhookOutbox } from '../../src/modules/webhooks/webhook-outbox.js';
import { DataSource } from 'typeorm';
import { createAccount, type TestAccount } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 3000);
const STEADY = Number(process.env.BENCH_STEADY ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const FAST_ENDPOINTS = 20;
/** Receiver servers (origins) the answering endpoints are spread over; one more serves the one that never answers. */
const RECEIVER_HOSTS = 10;
const SLOW_TIMEOUT_MS = '2000';
const ENV: Record<string, string> = {
  LOG_LEVEL: 'silent',
  WEBHOOK_DELIVERY_TIMEOUT_MS: SLOW_TIMEOUT_MS,
  WEBHOOK_MAX_ENDPOINTS_PER_KEY: '100',
  // Unset: the configured default (the figure the docs give).
  ...(process.env.BENCH_CONCURRENCY ? { WEBHOOK_DELIVERY_CONCURRENCY: process.env.BENCH_CONCURRENCY } : {}),
};

const pct = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? NaN;

/**
 * Counts what arrives at `/fast/…` (answered 200 at once) and lets `/slow/…` hang. Several
 * servers (ports), because the outbound client pools connections per origin (8 each), as real
 * receivers on different hosts would be.
 */
class BenchReceiver {
  readonly latencies: number[] = [];
  fast = 0;
  firstFastAt = 0;
  lastFastAt = 0;
  private readonly servers: Server[] = [];
  private readonly bases: string[] = [];

  async listen(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (req.url?.startsWith('/slow')) return; // never answers
          const now = Date.now();
          const { createdAt } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt: string };
          this.latencies.push(now - Date.parse(createdAt));
          if (this.fast++ === 0) this.firstFastAt = now;
          this.lastFastAt = now;
          res.writeHead(200).end();
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.servers.push(server);
      this.bases.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }
  }
  /** The i-th server's base URL (the last one is kept for the receiver that never answers). */
  base(i: number): string {
    return this.bases[i % (this.bases.length - 1)]!;
  }
  slowBase(): string {
    return this.bases.at(-1)!;
  }
  reset(): void {
    this.latencies.length = 0;
    this.fast = 0;
  }
  async close(): Promise<void> {
    for (const server of this.servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}

async function endpoint(api: TestApp, account: TestAccount, url: string): Promise<string> {
  const answer = await api.request('/api/svc/v1/webhook-endpoints', { method: 'POST', key: account.key, json: { url, events: ['audio.generation.succeeded'] } });
  if (answer.status !== 201) throw new Error(`endpoint creation answered ${answer.status}: ${await answer.text()}`);
  return ((await answer.json()) as { id: string }).id;
}

/** Writes one event through the outbox in its own transaction, as a task turning terminal does. */
async function emit(api: TestApp, account: TestAccount, endpointId: string): Promise<void> {
  const outbox = api.app.get(WebhookOutbox);
  await inTransaction(api.app.get(DataSource), (tx) =>
    outbox.record(
      {
        taskId: `audio:${randomUUID()}`,
        apiKeyId: account.keyId,
        workspaceId: account.workspaceId,
        webhookEndpointId: endpointId,
        status: 'succeeded',
        model: 'voice_v4',
        usage: { inputCharacters: 300, billableCharacters: 300, chargedUsd: 0.072 },
      },
      tx,
    ),
  );
}

const until = async (done: () => boolean, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

async function scenario(label: string, api: TestApp, account: TestAccount, receiver: BenchReceiver, slowShare: number): Promise<void> {
  const fast = await Promise.all(Array.from({ length: FAST_ENDPOINTS }, (_, i) => endpoint(api, account, `${receiver.base(i)}/fast/${label}/${i}`)));
  const slow = await endpoint(api, account, `${receiver.slowBase()}/slow/${label}`);
  const target = (i: number): string => (slowShare > 0 && i % Math.round(1 / slowShare) === 0 ? slow : fast[i % fast.length]!);
  const fastCount = (n: number): number => Array.from({ length: n }, (_, i) => target(i)).filter((id) => id !== slow).length;

  // 1. Backlog, then one worker drains it.
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < DELIVERIES) await emit(api, account, target(next++)); }));
  receiver.reset();
  const started = Date.now();
  const worker = await bootTestApp({ label: 'benchwh', db: api.db, env: { ...ENV, APP_ROLE: 'worker', QUEUE_PREFIX: api.queuePrefix, MEDIA_DIR: api.mediaDir } });
  try {
    const expected = fastCount(DELIVERIES);
    await until(() => receiver.fast >= expected, 600_000);
    const seconds = (receiver.lastFastAt - receiver.firstFastAt) / 1000;
    const boot = (receiver.firstFastAt - started) / 1000;
    const { claims, records } = worker.app.get(WebhookDeliveryRepository).batchCounters();
    const batches = (c: typeof claims): string => `${c.items} in ${c.calls} statements, largest ${c.largest}`;
    console.log(`${label}: backlog of ${DELIVERIES} (${expected} to answering receivers): ${((expected - 1) / seconds).toFixed(0)} deliveries/s from the first receipt to the last (${seconds.toFixed(1)} s; worker boot to first receipt ${boot.toFixed(1)} s)`);
    console.log(`${label}: claims ${batches(claims)}; records ${batches(records)}`);

    // 2. Steady stream at RATE per second.
    receiver.reset();
    const t0 = Date.now();
    for (let i = 0; i < STEADY; i++) {
      const due = t0 + (i * 1000) / RATE;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      void emit(api, account, target(i));
    }
    const steadyExpected = fastCount(STEADY);
    await until(() => receiver.fast >= steadyExpected, 600_000);
    console.log(`${label}: steady ${RATE}/s, ${steadyExpected} received: event→receipt p50 ${pct(receiver.latencies, 50)} ms, p99 ${pct(receiver.latencies, 99)} ms`);
  } finally {
    await worker.close();
  }
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}); deliveries ${DELIVERIES}, steady ${STEADY} at ${RATE}/s; concurrency ${ENV.WEBHOOK_DELIVERY_CONCURRENCY ?? 'default'}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const receiver = new BenchReceiver();
  await receiver.listen(RECEIVER_HOSTS + 1);
  const api = await bootTestApp({ label: 'benchwhapi', env: { ...ENV, APP_ROLE: 'api' } });
  try {
    const account = await createAccount(api, { environment: 'test' });
    await scenario('all-answering', api, account, receiver, 0);
    await scenario('10%-timing-out', api, account, receiver, 0.1);
  } finally {
    await api.close();
    await receiver.close();
  }
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

await main();
