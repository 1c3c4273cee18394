import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { eventually } from '../support/eventually.js';
import { metricSample } from '../support/prometheus.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  deliveriesOfTask,
  jobState,
  promoteDelivery,
  type Received,
  Receiver,
  type ReceiverAction,
  signatureTime,
  terminalTask,
  verifyWithStripe,
  waitForAttempts,
  waitForDelivery,
} from './deliveries-helpers.js';
import { createEndpoint, SUCCEEDED } from './endpoints-helpers.js';

const TIMEOUT_MS = 1000;

/**
 * What each answer of a receiver leads to, with the clock in the test's hand: retried on 500, a
 * dropped connection, a timeout and 429 (same event id, fresh `t`); 302 (not followed) and 404 end
 * the delivery at once.
 */
describe('webhook deliveries: outcomes and retries', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Receiver;
  const clock = new ManualClock(new Date());

  before(async () => {
    t = await bootTestApp({ label: 'whretry', clock, env: { WEBHOOK_DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    receiver = await Receiver.start();
    // Per path: the answers in order; the last one repeats.
    const script: Record<string, ReceiverAction[]> = {
      '/500': [{ status: 500, body: 'boom' }, { status: 200 }],
      '/drop': ['drop', { status: 200 }],
      '/hang': ['hang', { status: 204 }],
      '/429': [{ status: 429, headers: { 'retry-after': '120' } }, { status: 200 }],
      '/302': [{ status: 302, headers: { location: receiver.url('/target') } }],
      '/404': [{ status: 404, body: 'no such hook' }],
      '/always-503': [{ status: 503 }],
      '/late': [{ status: 503 }],
      // Announces 100 MiB and sends 4 KiB: only the start is read, the rest never waited for.
      '/huge-ok': [{ status: 200, headers: { 'content-length': String(100 * 1024 * 1024) }, body: 'x'.repeat(4096) }],
      '/huge-500': [{ status: 500, body: 'y'.repeat(1024 * 1024) }, { status: 200 }],
    };
    receiver.answer = (_index, request) => {
      const answers = script[request.path] ?? [{ status: 200 }];
      const seen = receiver.received.filter((r) => r.path === request.path).length - 1;
      return answers[Math.min(seen, answers.length - 1)]!;
    };
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const at = (path: string): Received[] => receiver.received.filter((r) => r.path === path);

  /** A task whose event goes to `path`; answers its delivery id and event time. */
  async function deliveryTo(path: string): Promise<{ id: string; eventId: string; eventAt: Date; secret: string }> {
    const endpoint = await createEndpoint(t, account, { url: receiver.url(path), events: [SUCCEEDED] });
    const task = await terminalTask(t, account, endpoint.id);
    const row = await waitForDelivery(t, task.id, () => true, `delivery to ${path}`);
    const payload = JSON.parse(row.payload) as { createdAt: string };
    return { id: row.id, eventId: row.event_id, eventAt: new Date(payload.createdAt), secret: endpoint.secret };
  }

  async function row(id: string) {
    return (await t.db.query<{ status: string; attempts: number; next_attempt_at: Date | null; last_status_code: number | null; last_error: string | null }>(
      'SELECT status, attempts, next_attempt_at, last_status_code, last_error FROM webhook_delivery WHERE id = $1',
      [id],
    ))[0]!;
  }

  for (const [path, firstCode, firstError] of [
    ['/500', 500, /^http_error: the receiver answered 500: boom/],
    ['/drop', null, /^network: /],
    ['/hang', null, /^timeout: /],
  ] as const) {
    it(`${path}: retried 10 s after the event with the same event id and a fresh t`, async () => {
      const delivery = await deliveryTo(path);
      const [first] = await waitForAttempts(t, delivery.id, 1);
      assert.equal(first!.status_code, firstCode);
      assert.match(first!.error ?? '', firstError);
      if (path === '/hang') assert.ok(first!.duration_ms >= TIMEOUT_MS, `cut at the timeout, not before (${first!.duration_ms} ms)`);
      const pending = await row(delivery.id);
      assert.equal(pending.status, 'pending');
      assert.equal(pending.attempts, 1);
      assert.deepEqual(pending.next_attempt_at, new Date(delivery.eventAt.getTime() + 10_000));

      clock.advance(10_000);
      await promoteDelivery(t, delivery.id);
      const attempts = await waitForAttempts(t, delivery.id, 2);
      assert.equal(attempts[1]!.error, null);
      const done = await row(delivery.id);
      assert.equal(done.status, 'succeeded');
      assert.equal(done.attempts, 2);
      const requests = at(path);
      assert.equal(requests.length, 2);
      assert.deepEqual(requests.map((r) => r.headers['x-svc-event-id']), [delivery.eventId, delivery.eventId]);
      assert.equal(requests[0]!.body, requests[1]!.body);
      assert.equal(signatureTime(requests[1]!) - signatureTime(requests[0]!), 10, 'a fresh t, 10 s later');
      for (const request of requests) assert.equal(verifyWithStripe(request.body, String(request.headers['x-svc-signature']), delivery.secret, 3600).id, delivery.eventId);
    });
  }

  it('429 with Retry-After: the next attempt waits as long as asked (past the 10 s step)', async () => {
    const delivery = await deliveryTo('/429');
    await waitForAttempts(t, delivery.id, 1);
    const pending = await row(delivery.id);
    assert.equal(pending.status, 'pending');
    assert.equal(pending.last_status_code, 429);
    assert.deepEqual(pending.next_attempt_at, new Date(clock.now().getTime() + 120_000));
  });

  it("a receiver's answer is read only up to 2 KiB: a 2xx announcing 100 MiB succeeds; a 500's 1 MiB body leaves a short error", async () => {
    const ok = await deliveryTo('/huge-ok');
    const [first] = await waitForAttempts(t, ok.id, 1);
    assert.deepEqual([first!.status_code, first!.error], [200, null]);
    assert.equal((await row(ok.id)).status, 'succeeded');

    const refused = await deliveryTo('/huge-500');
    const [attempt] = await waitForAttempts(t, refused.id, 1);
    assert.equal(attempt!.status_code, 500);
    assert.match(attempt!.error ?? '', /^http_error: the receiver answered 500: y+$/);
    assert.ok(attempt!.error!.length <= 500, `error kept short (${attempt!.error!.length})`);
    assert.equal((await row(refused.id)).status, 'pending', 'a 500 is retried');
  });

  for (const [path, code, error] of [
    ['/302', 302, /^redirect_not_followed: the receiver answered 302/],
    ['/404', 404, /^http_error: the receiver answered 404: no such hook/],
  ] as const) {
    it(`${path}: failed at once, no automatic retry`, async () => {
      const delivery = await deliveryTo(path);
      const attempts = await waitForAttempts(t, delivery.id, 1);
      assert.deepEqual(attempts.map((a) => a.status_code), [code]);
      const failed = await row(delivery.id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.attempts, 1);
      assert.equal(failed.next_attempt_at, null);
      assert.equal(failed.last_status_code, code);
      assert.match(failed.last_error ?? '', error);
      assert.equal(await eventually(() => jobState(t, delivery.id), (state) => state === 'completed', 'job ended'), 'completed');
      assert.equal(at(path).length, 1);
      assert.equal(at('/target').length, 0, 'the redirect target saw nothing');
    });
  }

  it('the schedule runs 10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, 15 h, 20 h after the event, then fails at the 24 h window', async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/always-503'), events: [SUCCEEDED] });
    const task = await terminalTask(t, account, endpoint.id);
    const first = await waitForDelivery(t, task.id, () => true, 'delivery');
    const eventAt = new Date((JSON.parse(first.payload) as { createdAt: string }).createdAt);
    const offsets = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 54_000_000, 72_000_000];
    for (const [i, offset] of offsets.entries()) {
      await waitForAttempts(t, first.id, i + 1);
      const pending = await row(first.id);
      assert.equal(pending.status, 'pending', `after attempt ${i + 1}`);
      assert.deepEqual(pending.next_attempt_at, new Date(eventAt.getTime() + offset), `next after attempt ${i + 1}`);
      clock.set(new Date(eventAt.getTime() + offset));
      await promoteDelivery(t, first.id);
    }
    await waitForAttempts(t, first.id, offsets.length + 1);
    const ended = await row(first.id);
    assert.equal(ended.status, 'failed');
    assert.equal(ended.attempts, offsets.length + 1);
    assert.match(ended.last_error ?? '', /retry_window_ended/);
    assert.equal(at('/always-503').length, offsets.length + 1);
    assert.equal((await deliveriesOfTask(t, task.id)).length, 1);
  });

  it('a delivery still pending 24 h after its event is failed without another POST', async () => {
    const delivery = await deliveryTo('/late');
    await waitForAttempts(t, delivery.id, 1);
    assert.equal((await row(delivery.id)).status, 'pending');
    clock.set(new Date(delivery.eventAt.getTime() + 24 * 3_600_000));
    await promoteDelivery(t, delivery.id);
    const ended = await eventually(() => row(delivery.id), (r) => r.status !== 'pending', 'delivery ended');
    assert.equal(ended.status, 'failed');
    assert.equal(ended.attempts, 1);
    assert.match(ended.last_error ?? '', /^retry_window_ended/);
    assert.equal(at('/late').length, 1, 'no POST after the window');
  });

  it('metrics: outcomes, attempt latency by result, oldest pending age, queue depth', async () => {
    const text = await (await t.request('/metrics')).text();
    const [counts] = await t.db.query<{ succeeded: number; failed: number; retried: number; pending: number; attempts: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_delivery_attempt a WHERE a.status_code BETWEEN 200 AND 299) AS succeeded,
              (SELECT count(*)::int FROM webhook_delivery WHERE status = 'failed') AS failed,
              (SELECT count(*)::int FROM webhook_delivery_attempt) AS attempts,
              (SELECT count(*)::int FROM webhook_delivery WHERE status = 'pending') AS pending,
              0 AS retried`,
    );
    assert.equal(metricSample(text, 'svc_webhook_deliveries_total', '{outcome="succeeded"}'), counts!.succeeded);
    assert.equal(metricSample(text, 'svc_webhook_deliveries_total', '{outcome="failed"}'), counts!.failed);
    const byOutcome = ['succeeded', 'retry', 'failed'].map((o) => metricSample(text, 'svc_webhook_deliveries_total', `{outcome="${o}"}`) ?? 0);
    // Every recorded attempt is counted once; the window cut without an attempt counts as failed too.
    assert.equal(byOutcome.reduce((a, b) => a + b, 0), counts!.attempts + 1);
    const histogramCount = ['2xx', '3xx', '4xx', '5xx', 'unreached'].map((r) => metricSample(text, 'svc_webhook_attempt_duration_seconds_count', `{result="${r}"}`) ?? 0);
    assert.equal(histogramCount.reduce((a, b) => a + b, 0), counts!.attempts);
    assert.ok(counts!.pending > 0, 'the 429 delivery is still pending');
    assert.ok((metricSample(text, 'svc_webhook_oldest_pending_seconds') ?? 0) > 0);
    assert.notEqual(metricSample(text, 'svc_queue_jobs', '{queue="webhooks",state="delayed"}'), undefined);
  });
});
