import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../libs/common/index.js';
import { inTransaction } from '../../src/database/transaction.js';
import { WebhookDeliveryRepository } from '../../src/modules/webhooks/webhook-delivery.repository.js';
import { WebhookDeliveryRunner } from '../../src/modules/webhooks/webhook-delivery.runner.js';
import { WebhookOutbox } from '../../src/modules/webhooks/webhook-outbox.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { attemptsOf, Receiver, verifyByHand, verifyWithStripe } from './deliveries-helpers.js';
import { createEndpoint, endpointPath, SUCCEEDED } from './endpoints-helpers.js';

/**
 * The worker claims and records attempts in batches (one statement for many deliveries). These
 * drive the runner by hand on `APP_ROLE=api` apps (no BullMQ worker picks the jobs up), so two Nest
 * apps on one database are two workers with their own group commits, pools and secret caches.
 */
describe('webhook deliveries: batched claim and record keep one attempt per claim', () => {
  const apps: TestApp[] = [];
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => {
    for (const app of apps.reverse()) await app.close();
    await receiver.close();
  });

  /** An app on its own database, or on `shared`'s database and queue prefix (a second worker). */
  async function boot(label: string, options: { clock?: ManualClock; env?: Record<string, string>; shared?: TestApp } = {}): Promise<TestApp> {
    const { clock, shared } = options;
    const env = { APP_ROLE: 'api', ...options.env, ...(shared ? { QUEUE_PREFIX: shared.queuePrefix, MEDIA_DIR: shared.mediaDir } : {}) };
    const app = await bootTestApp({ label, clock, db: shared?.db, env });
    apps.push(app);
    return app;
  }

  /** Writes one event and its pending delivery through the real outbox, as a task turning terminal does; answers the delivery id. */
  async function emit(t: TestApp, account: TestAccount, endpointId: string): Promise<string> {
    const taskId = `audio:${randomUUID()}`;
    await inTransaction(t.app.get(DataSource), (tx) =>
      t.app.get(WebhookOutbox).record(
        {
          taskId,
          apiKeyId: account.keyId,
          workspaceId: account.workspaceId,
          webhookEndpointId: endpointId,
          status: 'succeeded',
          model: 'voice_v4',
          usage: { inputCharacters: 10, billableCharacters: 10, chargedUsd: 0.01 },
        },
        tx,
      ),
    );
    const rows = await t.db.query<{ id: string }>(`SELECT d.id FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id WHERE e.task_id = $1`, [taskId]);
    return rows[0]!.id;
  }

  const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path);

  it('two workers racing over the same deliveries: each is sent once, with one recorded attempt; claims went in batches', async () => {
    // No per-endpoint limit in the way: every run reaches the claim.
    const env = { WEBHOOK_ENDPOINT_CONCURRENCY: '1000' };
    const a = await boot('whbatchrace', { env });
    const b = await boot('whbatchrace2', { env, shared: a });
    const account = await createAccount(a, { creditUsd: 5, environment: 'test' });
    receiver.answer = () => ({ status: 200 });
    const endpoint = await createEndpoint(a, account, { url: receiver.url('/race'), events: [SUCCEEDED] });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await emit(a, account, endpoint.id));

    // Every delivery run by both workers at once, a few times over: 240 runs for 40 deliveries.
    const runners = [a.app.get(WebhookDeliveryRunner), b.app.get(WebhookDeliveryRunner)];
    await Promise.all(ids.flatMap((id) => [0, 1, 2].flatMap(() => runners.map((runner) => runner.run(id, endpoint.id)))));

    const requests = requestsTo('/race');
    assert.equal(requests.length, ids.length, 'one POST per delivery, whatever the number of runs');
    const rows = await a.db.query<{ id: string; event_id: string; status: string; attempts: number }>(`SELECT id, event_id, status, attempts FROM webhook_delivery WHERE id = ANY($1)`, [ids]);
    assert.deepEqual(new Set(requests.map((r) => r.headers['x-svc-event-id'])), new Set(rows.map((r) => r.event_id)));
    for (const row of rows) {
      assert.equal(row.status, 'succeeded', row.id);
      assert.equal(row.attempts, 1, `${row.id}: claimed once`);
      assert.deepEqual((await attemptsOf(a, row.id)).map((x) => [x.attempt, x.status_code]), [[1, 200]], `${row.id}: one attempt recorded`);
    }
    for (const r of requests) verifyWithStripe(r.body, String(r.headers['x-svc-signature']), endpoint.secret);

    const counters = [a, b].map((t) => t.app.get(WebhookDeliveryRepository).batchCounters());
    const claims = counters.reduce((sum, c) => ({ calls: sum.calls + c.claims.calls, items: sum.items + c.claims.items }), { calls: 0, items: 0 });
    assert.equal(claims.items, 240, 'every run asked for a claim');
    assert.ok(claims.calls < claims.items, `claims shared statements (${claims.calls} statements for ${claims.items} claims)`);
    assert.ok(counters.some((c) => c.records.largest > 1), 'records shared statements');
  });

  it('a worker that dies between claim and record: the claim expires, the next run makes attempt 2; the late record of attempt 1 is refused', async () => {
    const clock = new ManualClock(new Date());
    const t = await boot('whbatchcrash', { clock });
    const account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    receiver.answer = () => ({ status: 200 });
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/crash'), events: [SUCCEEDED] });
    const id = await emit(t, account, endpoint.id);
    const repository = t.app.get(WebhookDeliveryRepository);
    const runner = t.app.get(WebhookDeliveryRunner);

    // The "dead" worker: it claimed attempt 1 and never got to send or record it.
    const claim = await repository.claim(id);
    assert.equal(claim.kind, 'claimed');
    assert.equal(claim.kind === 'claimed' && claim.attempt, 1);

    // While the claim holds, a run waits and sends nothing.
    const early = await runner.run(id, endpoint.id);
    assert.equal(early.kind, 'wait');
    assert.equal(requestsTo('/crash').length, 0);

    // Past the claim (timeout + grace), the next run takes attempt 2.
    clock.advance(t.config.env.WEBHOOK_DELIVERY_TIMEOUT_MS + 10_001);
    assert.deepEqual(await runner.run(id, endpoint.id), { kind: 'done' });
    assert.equal(requestsTo('/crash').length, 1);

    // The dead worker's record arrives late, batched with another delivery's valid one: only that one is written.
    const other = await emit(t, account, endpoint.id);
    const otherClaim = await repository.claim(other);
    assert.equal(otherClaim.kind, 'claimed');
    const record = { manual: false, startedAt: clock.now(), durationMs: 5, statusCode: 500, error: 'http_error: late', status: 'failed' as const, nextAttemptAt: null, at: clock.now() };
    assert.deepEqual(await repository.recordBatch([{ ...record, id, attempt: 1 }, { ...record, id: other, attempt: 1 }]), [false, true]);

    const rows = await t.db.query<{ id: string; status: string; attempts: number; last_status_code: number }>(`SELECT id, status, attempts, last_status_code FROM webhook_delivery WHERE id = ANY($1)`, [[id, other]]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const { status, attempts, last_status_code } = byId.get(id)!;
    assert.deepEqual({ status, attempts, last_status_code }, { status: 'succeeded', attempts: 2, last_status_code: 200 }, 'the late record changed nothing');
    assert.deepEqual((await attemptsOf(t, id)).map((x) => [x.attempt, x.status_code]), [[2, 200]]);
    assert.equal(byId.get(other)!.status, 'failed');
    assert.deepEqual((await attemptsOf(t, other)).map((x) => [x.attempt, x.status_code]), [[1, 500]]);
    // The same record again (a repeated job) is refused too: the attempt is recorded once.
    assert.deepEqual(await repository.recordBatch([{ ...record, id: other, attempt: 1 }]), [false]);
  });

  it('a rotation in another process while deliveries are pending: the next attempts sign with the new secret only', async () => {
    const clock = new ManualClock(new Date());
    const worker = await boot('whbatchrotate', { clock });
    const api = await boot('whbatchrotate2', { clock, shared: worker });
    const account = await createAccount(worker, { creditUsd: 5, environment: 'test' });
    let refuse = true;
    let refusedEvent = 'none';
    receiver.answer = (_index, request) => (request.path === '/rotate' && request.body.includes(refusedEvent) && refuse ? { status: 503 } : { status: 200 });
    const endpoint = await createEndpoint(worker, account, { url: receiver.url('/rotate'), events: [SUCCEEDED] });
    const runner = worker.app.get(WebhookDeliveryRunner);
    const [first, retried, later] = [await emit(worker, account, endpoint.id), await emit(worker, account, endpoint.id), await emit(worker, account, endpoint.id)];
    const eventOf = async (id: string) => (await worker.db.query<{ event_id: string }>('SELECT event_id FROM webhook_delivery WHERE id = $1', [id]))[0]!.event_id;

    // The worker signs twice with the first secret (it keeps it opened), one of them refused with a 503.
    await runner.run(first, endpoint.id);
    refusedEvent = await eventOf(retried);
    assert.equal((await runner.run(retried, endpoint.id)).kind, 'wait');
    assert.equal(requestsTo('/rotate').length, 2);

    // Rotated through the other app: this worker's process is not told.
    const rotation = await api.request(endpointPath(endpoint.id, '/rotate-secret'), { method: 'POST', key: account.key });
    assert.equal(rotation.status, 200);
    const rotated = ((await rotation.json()) as { secret: string }).secret;
    assert.notEqual(rotated, endpoint.secret);

    refuse = false;
    await runner.run(later, endpoint.id);
    clock.advance(10_000);
    assert.deepEqual(await runner.run(retried, endpoint.id), { kind: 'done' });

    const [beforeA, beforeB, afterA, afterB] = requestsTo('/rotate');
    const signature = (r: typeof beforeA) => String(r!.headers['x-svc-signature']);
    for (const r of [beforeA, beforeB]) assert.ok(verifyByHand(r!.body, signature(r), endpoint.secret), 'before the rotation: the first secret');
    for (const r of [afterA, afterB]) {
      assert.ok(verifyByHand(r!.body, signature(r), rotated, Math.floor(clock.now().getTime() / 1000)), 'after: the new secret');
      assert.equal(verifyByHand(r!.body, signature(r), endpoint.secret, Math.floor(clock.now().getTime() / 1000)), false, 'and never the old one');
    }
    assert.equal(afterB!.headers['x-svc-event-id'], refusedEvent, 'the retried delivery keeps its event id');
    assert.equal(beforeB!.headers['x-svc-event-id'], refusedEvent);
  });
});
