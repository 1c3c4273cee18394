import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAudio, speechBody } from '../audio/audio-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  attemptsOf,
  deliveriesOfTask,
  listDeliveries,
  Receiver,
  terminalTask,
  verifyByHand,
  verifyWithStripe,
  waitForDelivery,
} from './deliveries-helpers.js';
import { createEndpoint, endpointPath, FAILED, SUCCEEDED } from './endpoints-helpers.js';

/**
 * One signed POST per terminal audio task, to a real local receiver: verified by Stripe's verifier
 * and by hand, payload exact; failed tasks send `audio.generation.failed`; subscriptions are honoured;
 * the event is written with the terminal status (outbox); a rotated secret signs at once.
 */
describe('webhook deliveries: signed events', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Receiver;

  before(async () => {
    t = await bootTestApp({ label: 'whsigned' });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    receiver = await Receiver.start();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  it('a succeeded task: one POST, signed, verified by Stripe and by hand, the payload exact', async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/a'), events: [SUCCEEDED, FAILED] });
    const task = await terminalTask(t, account, endpoint.id);
    assert.equal(task.status, 'succeeded');
    const delivery = await waitForDelivery(t, task.id, (row) => row.status === 'succeeded', 'delivery succeeded');
    const got = receiver.received.filter((r) => r.path === '/a');
    assert.equal(got.length, 1);
    const [request] = got;
    const header = String(request!.headers['x-svc-signature']);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWithStripe(request!.body, header, endpoint.secret).id, delivery.event_id);
    assert.equal(verifyByHand(request!.body, header, endpoint.secret), true);
    assert.equal(verifyByHand(request!.body, header, 'whsec_not_the_secret'), false);
    assert.throws(() => verifyWithStripe(request!.body.replace('succeeded', 'failed'), header, endpoint.secret));

    assert.equal(request!.method, 'POST');
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.match(String(request!.headers['user-agent']), /^svc-webhooks\//);
    assert.equal(request!.headers['x-svc-event-id'], delivery.event_id);
    const payload = JSON.parse(request!.body) as Record<string, unknown>;
    assert.equal(request!.body, delivery.payload, 'the bytes sent are the frozen payload');
    assert.deepEqual(Object.keys(payload), ['id', 'type', 'createdAt', 'data']);
    assert.match(delivery.event_id, /^event:[0-9a-f-]{36}$/);
    assert.deepEqual(payload, {
      id: delivery.event_id,
      type: SUCCEEDED,
      createdAt: payload.createdAt,
      data: { taskId: task.id, model: task.model, status: 'succeeded', usage: task.usage },
    });
    assert.ok(!Number.isNaN(Date.parse(String(payload.createdAt))));
    assert.doesNotMatch(request!.body, /https?:\/\//, 'no output URL in the payload');

    assert.equal(delivery.attempts, 1);
    assert.equal(delivery.last_status_code, 200);
    const attempts = await attemptsOf(t, delivery.id);
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status_code, a.error, a.manual]), [[1, 200, null, false]]);

    const log = await listDeliveries(t, account, endpoint.id);
    assert.equal(log.status, 200);
    assert.deepEqual(log.body, {
      items: [
        {
          id: delivery.id,
          eventId: delivery.event_id,
          eventType: SUCCEEDED,
          status: 'succeeded',
          attempts: 1,
          lastStatusCode: 200,
          lastError: null,
          nextAttemptAt: null,
          createdAt: log.body.items[0].createdAt,
          updatedAt: log.body.items[0].updatedAt,
        },
      ],
      hasMore: false,
      nextCursor: null,
    });
  });

  it('a failing task sends audio.generation.failed; an endpoint subscribed only to succeeded gets nothing for it', async () => {
    const both = await createEndpoint(t, account, { url: receiver.url('/both'), events: [SUCCEEDED, FAILED] });
    const onlySucceeded = await createEndpoint(t, account, { url: receiver.url('/only'), events: [SUCCEEDED] });

    const failing = await createAudio(t, account, speechBody({ prompt: 'This one fails [sandbox:fail]', webhookEndpointId: both.id }));
    assert.equal(failing.status, 200, JSON.stringify(failing.body));
    const delivery = await waitForDelivery(t, failing.body.id as string, (row) => row.status === 'succeeded', 'failed-event delivery');
    const request = receiver.received.find((r) => r.path === '/both')!;
    const payload = verifyWithStripe(request.body, String(request.headers['x-svc-signature']), both.secret) as unknown as { type: string; data: { status: string; taskId: string } };
    assert.equal(payload.type, FAILED);
    assert.equal(payload.data.status, 'failed');
    assert.equal(payload.data.taskId, failing.body.id);
    assert.equal(delivery.type, FAILED);

    const unsubscribed = await createAudio(t, account, speechBody({ prompt: 'Fails unseen [sandbox:fail]', webhookEndpointId: onlySucceeded.id }));
    assert.equal(unsubscribed.status, 200);
    const ended = await eventually(
      async () => (await t.db.query<{ status: string }>('SELECT status FROM audio_task WHERE id = $1', [unsubscribed.body.id]))[0]!.status,
      (status) => status === 'failed',
      'unsubscribed task failed',
    );
    assert.equal(ended, 'failed');
    // The event would have been written in the transaction that made the task failed: none exists, none will.
    assert.deepEqual(await deliveriesOfTask(t, unsubscribed.body.id as string), []);
    assert.equal(receiver.received.filter((r) => r.path === '/only').length, 0);
  });

  it('outbox: the event exists exactly when the task is terminal, one per task', async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/outbox'), events: [SUCCEEDED] });
    const created = await createAudio(t, account, speechBody({ prompt: 'Slow one [sandbox:delay=1500]', webhookEndpointId: endpoint.id }));
    assert.equal(created.status, 200);
    const id = created.body.id as string;
    // Read the status and the events in one statement (one snapshot): never an event without a terminal task.
    const snapshot = () =>
      t.db.query<{ status: string; events: number }>(`SELECT status, (SELECT count(*)::int FROM webhook_event WHERE task_id = $1) AS events FROM audio_task WHERE id = $1`, [id]);
    const seen = new Set<string>();
    await eventually(
      async () => {
        const [row] = await snapshot();
        seen.add(`${row!.status}:${row!.events}`);
        return row!;
      },
      (row) => row.status === 'succeeded',
      'slow task succeeded',
    );
    assert.ok([...seen].every((s) => s === 'succeeded:1' || /^(queued|processing):0$/.test(s)), [...seen].join(' '));
    assert.ok(seen.has('processing:0') || seen.has('queued:0'), 'the task was seen unfinished, without an event');
    const [row] = await snapshot();
    assert.equal(row!.events, 1);
  });

  it('rotation: the next delivery verifies with the new secret, not with the old one', async () => {
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/rotate'), events: [SUCCEEDED] });
    const rotated = await t.request(endpointPath(endpoint.id, '/rotate-secret'), { method: 'POST', key: account.key });
    assert.equal(rotated.status, 200);
    const { secret } = (await rotated.json()) as { secret: string };
    assert.notEqual(secret, endpoint.secret);
    const task = await terminalTask(t, account, endpoint.id);
    await waitForDelivery(t, task.id, (row) => row.status === 'succeeded', 'delivery after rotation');
    const request = receiver.received.find((r) => r.path === '/rotate')!;
    const header = String(request.headers['x-svc-signature']);
    assert.equal(verifyWithStripe(request.body, header, secret).type, SUCCEEDED);
    assert.throws(() => verifyWithStripe(request.body, header, endpoint.secret));
    assert.equal(verifyByHand(request.body, header, endpoint.secret), false);
  });

  it('the admin list shows deliveries across endpoints, by status, cursor-paged', async () => {
    const page = await t.request('/admin/v1/webhook-deliveries?status=succeeded&limit=2', { admin: true });
    assert.equal(page.status, 200);
    const body = (await page.json()) as { items: Array<{ status: string; endpointId: string; apiKeyId: string }>; hasMore: boolean; nextCursor: string | null };
    assert.equal(body.items.length, 2);
    assert.ok(body.items.every((item) => item.status === 'succeeded' && item.apiKeyId === account.keyId && item.endpointId.startsWith('webhook:')));
    assert.equal(body.hasMore, true);
    const next = await t.request(`/admin/v1/webhook-deliveries?status=succeeded&limit=100&after=${body.nextCursor}`, { admin: true });
    const rest = (await next.json()) as { items: Array<{ id: string }> };
    const [count] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE status = 'succeeded'`);
    assert.equal(body.items.length + rest.items.length, count!.n);
    const refused = await t.request('/admin/v1/webhook-deliveries?status=sent', { admin: true });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'admin.invalid_field');
  });
});
