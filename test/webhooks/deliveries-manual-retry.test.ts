import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  attemptsOf,
  jobState,
  listDeliveries,
  promoteDelivery,
  Receiver,
  retryDelivery,
  signatureTime,
  terminalTask,
  verifyWithStripe,
  waitForAttempts,
  waitForDelivery,
} from './deliveries-helpers.js';
import { assertError, createEndpoint, endpointPath, SUCCEEDED } from './endpoints-helpers.js';

const DAY = 24 * 3_600_000;

/**
 * The delivery log and manual retry: an eligible failed delivery gets one new attempt (same event
 * id, fresh t); every ineligible case answers 409 and changes nothing; foreign or unknown ids 404.
 * Disabling an endpoint stops its pending deliveries.
 */
describe('webhook deliveries: log, manual retry, disable', () => {
  let t: TestApp;
  let account: TestAccount;
  let other: TestAccount;
  let receiver: Receiver;
  /** Paths answered 404 until a test lets them through. */
  const refusing = new Set<string>();
  const clock = new ManualClock(new Date());

  before(async () => {
    t = await bootTestApp({ label: 'whmanual', clock });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    other = await createAccount(t, { creditUsd: 1, environment: 'test' });
    receiver = await Receiver.start();
    receiver.answer = (_index, request) => (refusing.has(request.path) ? { status: 404 } : request.path === '/down' ? { status: 503 } : { status: 200 });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  /** A delivery that failed (404) on an endpoint of `account`. */
  async function failedDelivery(path: string) {
    refusing.add(path);
    const endpoint = await createEndpoint(t, account, { url: receiver.url(path), events: [SUCCEEDED] });
    const task = await terminalTask(t, account, endpoint.id);
    const row = await waitForDelivery(t, task.id, (r) => r.status === 'failed', `delivery to ${path} failed`);
    await eventually(() => jobState(t, row.id), (state) => state === 'completed', 'job ended');
    return { endpoint, delivery: row };
  }

  const snapshot = async (deliveryId: string) => ({
    row: (await t.db.query('SELECT status, attempts, next_attempt_at, manual, updated_at FROM webhook_delivery WHERE id = $1', [deliveryId]))[0],
    attempts: await attemptsOf(t, deliveryId),
    job: await jobState(t, deliveryId),
  });

  it('an eligible failed delivery: 200 with the delivery, one new attempt, the same event id and a fresh t', async () => {
    const { endpoint, delivery } = await failedDelivery('/fixed');
    refusing.delete('/fixed');
    clock.advance(3 * DAY);
    const answer = await retryDelivery(t, account, endpoint.id, delivery.id);
    const body = (await answer.json()) as Record<string, unknown>;
    assert.equal(answer.status, 200, JSON.stringify(body));
    assert.equal(body.id, delivery.id);
    assert.equal(body.status, 'pending');
    assert.equal(body.eventId, delivery.event_id);
    assert.equal(body.attempts, 1);
    const attempts = await waitForAttempts(t, delivery.id, 2);
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status_code, a.manual]), [[1, 404, false], [2, 200, true]]);
    const requests = receiver.received.filter((r) => r.path === '/fixed');
    assert.equal(requests.length, 2);
    assert.equal(requests[1]!.headers['x-svc-event-id'], delivery.event_id);
    assert.equal(requests[1]!.body, requests[0]!.body);
    assert.equal(signatureTime(requests[1]!) - signatureTime(requests[0]!), 3 * 24 * 3600);
    verifyWithStripe(requests[1]!.body, String(requests[1]!.headers['x-svc-signature']), endpoint.secret, 4 * 24 * 3600);
    const log = await listDeliveries(t, account, endpoint.id);
    assert.equal(log.body.items[0].status, 'succeeded');
    assert.equal(log.body.items[0].attempts, 2);
  });

  it('a manual retry that fails again ends failed, without restarting the automatic schedule', async () => {
    const { endpoint, delivery } = await failedDelivery('/still-refusing');
    const answer = await retryDelivery(t, account, endpoint.id, delivery.id);
    assert.equal(answer.status, 200);
    await waitForAttempts(t, delivery.id, 2);
    const after = await eventually(() => snapshot(delivery.id), (s) => s.job === 'completed', 'manual job ended');
    assert.equal((after.row as { status: string }).status, 'failed');
    assert.equal(receiver.received.filter((r) => r.path === '/still-refusing').length, 2);
  });

  it('not eligible → 409 webhook.delivery_not_retryable and nothing changes: pending, succeeded, disabled endpoint, event seven days old', async () => {
    // Succeeded.
    const okEndpoint = await createEndpoint(t, account, { url: receiver.url('/ok'), events: [SUCCEEDED] });
    const okTask = await terminalTask(t, account, okEndpoint.id);
    const succeeded = await waitForDelivery(t, okTask.id, (r) => r.status === 'succeeded', 'succeeded');
    // Pending (503 → waiting for its next attempt).
    const downEndpoint = await createEndpoint(t, account, { url: receiver.url('/down'), events: [SUCCEEDED] });
    const downTask = await terminalTask(t, account, downEndpoint.id);
    const pending = await waitForDelivery(t, downTask.id, (r) => r.status === 'pending' && r.last_status_code === 503, 'pending');
    await eventually(() => jobState(t, pending.id), (state) => state === 'delayed', 'delayed');
    // Failed, then its endpoint disabled.
    const disabled = await failedDelivery('/disabled');
    assert.equal((await t.request(endpointPath(disabled.endpoint.id), { method: 'DELETE', key: account.key })).status, 200);
    // Failed, then seven days pass.
    const old = await failedDelivery('/old');
    clock.advance(7 * DAY);

    for (const [what, endpointId, deliveryId] of [
      ['succeeded', okEndpoint.id, succeeded.id],
      ['pending', downEndpoint.id, pending.id],
      ['endpoint disabled', disabled.endpoint.id, disabled.delivery.id],
      ['event seven days old', old.endpoint.id, old.delivery.id],
    ] as const) {
      const before = await snapshot(deliveryId);
      await assertError(await retryDelivery(t, account, endpointId, deliveryId), 409, 'webhook.delivery_not_retryable');
      assert.deepEqual(await snapshot(deliveryId), before, `${what}: nothing changed`);
    }
  });

  it('unknown or foreign endpoint or delivery → 404 webhook.not_found, on the log and the retry', async () => {
    const { endpoint, delivery } = await failedDelivery('/foreign');
    const otherEndpoint = await createEndpoint(t, other, { url: receiver.url('/other'), events: [SUCCEEDED] });
    const before = await snapshot(delivery.id);
    const cases: Array<[string, TestAccount, string, string]> = [
      ['another key, its endpoint', other, endpoint.id, delivery.id],
      ['own endpoint, a delivery of another endpoint', other, otherEndpoint.id, delivery.id],
      ['unknown endpoint', account, 'webhook:00000000-0000-4000-8000-000000000000', delivery.id],
      ['malformed endpoint id', account, 'nope', delivery.id],
      ['unknown delivery', account, endpoint.id, 'delivery:00000000-0000-4000-8000-000000000000'],
      ['malformed delivery id', account, endpoint.id, 'x'],
    ];
    for (const [what, caller, endpointId, deliveryId] of cases) {
      await assertError(await retryDelivery(t, caller, endpointId, deliveryId), 404, 'webhook.not_found').catch((err: Error) => assert.fail(`${what}: ${err.message}`));
    }
    await assertError(await t.request(endpointPath(endpoint.id, '/deliveries'), { key: other.key }), 404, 'webhook.not_found');
    assert.deepEqual(await snapshot(delivery.id), before);
    assert.deepEqual((await listDeliveries(t, other, otherEndpoint.id)).body.items, []);
  });

  it('the log is newest first and cursor-paged; a bad cursor or limit is a 400', async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/paged'), events: [SUCCEEDED] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      const task = await terminalTask(t, account, endpoint.id);
      ids.push((await waitForDelivery(t, task.id, () => true, 'delivery')).id);
    }
    const first = await listDeliveries(t, account, endpoint.id, '?limit=2');
    assert.deepEqual(first.body.items.map((d: { id: string }) => d.id), [ids[2], ids[1]]);
    assert.equal(first.body.hasMore, true);
    const second = await listDeliveries(t, account, endpoint.id, `?limit=2&after=${first.body.nextCursor}`);
    assert.deepEqual(second.body.items.map((d: { id: string }) => d.id), [ids[0]]);
    assert.equal(second.body.hasMore, false);
    assert.equal(second.body.nextCursor, null);
    await assertError(await t.request(endpointPath(endpoint.id, '/deliveries?limit=0'), { key: account.key }), 400, 'webhook.invalid_field');
    await assertError(await t.request(endpointPath(endpoint.id, '/deliveries?after=zzz'), { key: account.key }), 400, 'webhook.invalid_field');
    // Cursors a JavaScript Date accepts but PostgreSQL does not (these were 500s): an extreme year, a NUL in the id.
    for (const raw of ['-271821-04-20T00:00:00.000Z|delivery:x', '2026-01-01T00:00:00.000Z|a\u0000b']) {
      const after = Buffer.from(raw, 'utf8').toString('base64url');
      await assertError(await t.request(endpointPath(endpoint.id, `/deliveries?after=${after}`), { key: account.key }), 400, 'webhook.invalid_field');
      await assertError(await t.request(`/admin/v1/webhook-deliveries?after=${after}`, { admin: true }), 400, 'admin.invalid_field');
    }
    await assertError(await t.request(endpointPath(endpoint.id, '/deliveries?status=failed'), { key: account.key }), 400, 'webhook.unknown_field');
  });

  it("disabling an endpoint stops its pending deliveries: failed with the reason, no further POST", async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/down'), events: [SUCCEEDED] });
    const task = await terminalTask(t, account, endpoint.id);
    const pending = await waitForDelivery(t, task.id, (r) => r.status === 'pending' && r.last_status_code === 503, 'pending after 503');
    const sent = receiver.received.filter((r) => r.path === '/down').length;
    const disabledAnswer = await t.request(endpointPath(endpoint.id), { method: 'PATCH', key: account.key, json: { enabled: false } });
    assert.equal(disabledAnswer.status, 200);
    clock.advance(10_000);
    await promoteDelivery(t, pending.id);
    const ended = await waitForDelivery(t, task.id, (r) => r.status !== 'pending', 'delivery stopped');
    assert.equal(ended.status, 'failed');
    assert.match(ended.last_error ?? '', /^endpoint_disabled/);
    assert.equal(ended.attempts, 1);
    assert.equal(receiver.received.filter((r) => r.path === '/down').length, sent);
    // And a task finishing while the endpoint is disabled records no event at all.
    const later = await terminalTask(t, account, endpoint.id);
    assert.deepEqual(await t.db.query('SELECT id FROM webhook_event WHERE task_id = $1', [later.id]), []);
  });

  it('DELETE with a delivery pending: the log shows it failed (endpoint_disabled) when DELETE answers, nothing more is sent; re-enabled, a manual retry delivers it at once', async () => {
    let down = true;
    const previous = receiver.answer;
    // 429 asking for an hour: the delivery's job sits in the delayed set for that long.
    receiver.answer = (index, request) =>
      request.path === '/flaky' ? (down ? { status: 429, headers: { 'retry-after': '3600' } } : { status: 200 }) : previous(index, request);
    try {
      const endpoint = await createEndpoint(t, account, { url: receiver.url('/flaky'), events: [SUCCEEDED] });
      const task = await terminalTask(t, account, endpoint.id);
      const pending = await waitForDelivery(t, task.id, (r) => r.status === 'pending' && r.last_status_code === 429, 'pending after 429');
      await eventually(() => jobState(t, pending.id), (state) => state === 'delayed', 'job delayed for the hour');
      assert.equal((await t.request(endpointPath(endpoint.id), { method: 'DELETE', key: account.key })).status, 200);
      const log = await listDeliveries(t, account, endpoint.id);
      assert.equal(log.body.items[0].id, pending.id);
      assert.equal(log.body.items[0].status, 'failed', 'stopped at once, not left "pending" with a next attempt that will not be made');
      assert.equal(log.body.items[0].nextAttemptAt, null);
      assert.match(log.body.items[0].lastError, /^endpoint_disabled/);
      assert.equal(log.body.items[0].attempts, 1);

      down = false;
      await assertError(await retryDelivery(t, account, endpoint.id, pending.id), 409, 'webhook.delivery_not_retryable');
      assert.equal((await t.request(endpointPath(endpoint.id), { method: 'PATCH', key: account.key, json: { enabled: true } })).status, 200);
      // The manual attempt runs now, not when the old delayed job would have woken (an hour on).
      assert.equal((await retryDelivery(t, account, endpoint.id, pending.id)).status, 200);
      const attempts = await waitForAttempts(t, pending.id, 2);
      assert.deepEqual(attempts.map((a) => [a.attempt, a.status_code, a.manual]), [[1, 429, false], [2, 200, true]]);
      const requests = receiver.received.filter((r) => r.path === '/flaky');
      assert.deepEqual(requests.map((r) => r.headers['x-svc-event-id']), [pending.event_id, pending.event_id]);
      assert.equal(await eventually(() => jobState(t, pending.id), (state) => state === 'completed', 'job ended'), 'completed');
    } finally {
      receiver.answer = previous;
    }
  });
});
