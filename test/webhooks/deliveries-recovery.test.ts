import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { createAudio, speechBody } from '../audio/audio-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { WorkerChildren } from '../support/worker-children.js';
import { attemptsOf, jobState, Receiver, terminalTask, verifyWithStripe, waitForAttempts, waitForDelivery } from './deliveries-helpers.js';
import { createEndpoint, SUCCEEDED } from './endpoints-helpers.js';

/** PostgreSQL holds the schedule: a Redis flush loses no delivery, and a worker killed mid-POST only delays one. */
describe('webhook deliveries: Redis flush and a killed worker', () => {
  const apps: TestApp[] = [];
  let workerApi!: TestApp;
  const workers = new WorkerChildren(() => workerApi);
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start();
  });
  after(async () => {
    workers.killAll();
    for (const app of apps.reverse()) await app.close();
    await receiver.close();
  });

  it('Redis flushed with deliveries pending: the reconciler enqueues them again and all are delivered', async () => {
    const clock = new ManualClock(new Date());
    const t = await bootTestApp({ label: 'whflush', clock, env: { RECONCILE_INTERVAL_MS: '1000' } });
    apps.push(t);
    const account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    let open = false;
    receiver.answer = (_index, request) => (request.path === '/flush' && !open ? { status: 503 } : { status: 200 });
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/flush'), events: [SUCCEEDED] });
    const deliveries = [];
    for (let i = 0; i < 3; i++) {
      const task = await terminalTask(t, account, endpoint.id, `Flush me ${i}.`);
      deliveries.push(await waitForDelivery(t, task.id, (r) => r.status === 'pending' && r.last_status_code === 503, `delivery ${i} pending`));
    }
    for (const d of deliveries) await eventually(() => jobState(t, d.id), (state) => state === 'delayed', 'delayed');

    await t.flushRedis();
    for (const d of deliveries) assert.equal(await jobState(t, d.id), 'missing', 'the flush removed the job');
    open = true;
    clock.advance(10_000);

    for (const d of deliveries) {
      const done = await eventually(
        async () => (await t.db.query<{ status: string }>('SELECT status FROM webhook_delivery WHERE id = $1', [d.id]))[0]!,
        (row) => row.status === 'succeeded',
        `delivery ${d.id} after the flush`,
      );
      assert.equal(done.status, 'succeeded');
      const attempts = await attemptsOf(t, d.id);
      assert.deepEqual(attempts.map((a) => a.status_code), [503, 200]);
    }
    const ids = receiver.received.filter((r) => r.path === '/flush' && r.headers['x-svc-event-id']).map((r) => r.headers['x-svc-event-id']);
    for (const d of deliveries) assert.equal(ids.filter((id) => id === d.event_id).length, 2, `${d.event_id}: once refused, once delivered`);
    for (const r of receiver.received.filter((x) => x.path === '/flush')) verifyWithStripe(r.body, String(r.headers['x-svc-signature']), endpoint.secret, 3600);
  });

  it('a worker killed (SIGKILL) mid-POST: after its claim expires another worker sends again, same event id; delivered at least once', async () => {
    const api = await bootTestApp({ label: 'whkill', env: { APP_ROLE: 'api' } });
    apps.push(api);
    const account = await createAccount(api, { creditUsd: 5, environment: 'test' });
    let hung!: () => void;
    const firstArrived = new Promise<void>((resolve) => (hung = resolve));
    receiver.answer = (_index, request) => {
      if (request.path !== '/kill') return { status: 200 };
      if (receiver.received.filter((r) => r.path === '/kill').length === 1) {
        hung();
        return 'hang';
      }
      return { status: 200 };
    };
    const endpoint = await createEndpoint(api, account, { url: receiver.url('/kill'), events: [SUCCEEDED] });

    workerApi = api;
    const child = await workers.start({
      env: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOW_PRIVATE: 'true', WEBHOOK_DELIVERY_TIMEOUT_MS: '2000' },
    });

    const created = await createAudio(api, account, speechBody({ prompt: 'Killed while posting.', webhookEndpointId: endpoint.id }));
    assert.equal(created.status, 200);
    await firstArrived;
    await workers.kill(child);
    const claimed = await waitForDelivery(api, created.body.id as string, () => true, 'delivery');
    assert.equal(claimed.status, 'pending');
    assert.equal(claimed.attempts, 1, 'the first attempt was claimed');
    assert.deepEqual(await attemptsOf(api, claimed.id), [], 'and never recorded: its worker died mid-POST');

    // Redis loses the active job too; a new worker's boot reconcile finds the pending delivery.
    await api.flushRedis();
    const second = await bootTestApp({ label: 'whkill2', db: api.db, env: { APP_ROLE: 'worker', QUEUE_PREFIX: api.queuePrefix, MEDIA_DIR: api.mediaDir, WEBHOOK_DELIVERY_TIMEOUT_MS: '2000' } });
    apps.push(second);
    const attempts = await waitForAttempts(api, claimed.id, 1, 60_000);
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status_code]), [[2, 200]]);
    const done = await waitForDelivery(api, created.body.id as string, (r) => r.status === 'succeeded', 'delivered after the kill');
    assert.equal(done.attempts, 2);
    const requests = receiver.received.filter((r) => r.path === '/kill');
    assert.equal(requests.length, 2);
    assert.deepEqual(requests.map((r) => r.headers['x-svc-event-id']), [done.event_id, done.event_id]);
    for (const r of requests) verifyWithStripe(r.body, String(r.headers['x-svc-signature']), endpoint.secret);
  });
});
