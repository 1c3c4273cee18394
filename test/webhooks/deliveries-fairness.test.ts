import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAudio, speechBody } from '../audio/audio-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { attemptsOf, Receiver, terminalTask, waitForDelivery } from './deliveries-helpers.js';
import { createEndpoint, SUCCEEDED } from './endpoints-helpers.js';

/**
 * One dead receiver cannot take every delivery slot: with 2 slots and at most 1 per endpoint, three
 * deliveries hanging on a dead endpoint leave a slot for a healthy one, which is delivered while the
 * dead one's first attempt is still hanging (no timing: the order of events is what is asserted).
 */
describe('webhook deliveries: a dead receiver does not hold up the others', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Receiver;

  before(async () => {
    t = await bootTestApp({
      label: 'whfair',
      env: { WEBHOOK_DELIVERY_CONCURRENCY: '2', WEBHOOK_ENDPOINT_CONCURRENCY: '1', WEBHOOK_DELIVERY_TIMEOUT_MS: '30000' },
    });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    receiver = await Receiver.start();
    receiver.answer = (_index, request) => (request.path === '/dead' ? 'hang' : { status: 200 });
  });
  after(async () => {
    // The receiver first: its hanging requests end, so the worker's shutdown does not wait for them.
    await receiver.close();
    await t.close();
  });

  it('three deliveries to a hanging endpoint, then one to a healthy endpoint: the healthy one arrives first', async () => {
    const dead = await createEndpoint(t, account, { url: receiver.url('/dead'), events: [SUCCEEDED] });
    const healthy = await createEndpoint(t, account, { url: receiver.url('/healthy'), events: [SUCCEEDED] });
    const deadTasks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await createAudio(t, account, speechBody({ prompt: `Dead ${i}.`, webhookEndpointId: dead.id }));
      assert.equal(created.status, 200);
      deadTasks.push(created.body.id as string);
    }
    const deadDeliveries = [];
    for (const id of deadTasks) deadDeliveries.push(await waitForDelivery(t, id, () => true, 'dead delivery'));
    await eventually(async () => receiver.received.filter((r) => r.path === '/dead').length, (n) => n >= 1, 'a POST hanging on the dead endpoint');

    const task = await terminalTask(t, account, healthy.id);
    const delivered = await waitForDelivery(t, task.id, (r) => r.status === 'succeeded', 'healthy delivery');
    assert.equal(delivered.attempts, 1);
    // The dead endpoint never had more than one attempt in flight, and none of them has ended yet.
    assert.equal(receiver.received.filter((r) => r.path === '/dead').length, 1);
    for (const d of deadDeliveries) assert.deepEqual(await attemptsOf(t, d.id), [], `${d.id} still hanging or waiting`);
    const claimed = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE endpoint_id = $1 AND claimed_until IS NOT NULL`, [dead.id]);
    assert.equal(claimed[0]!.n, 1, 'one claimed attempt at a time for the dead endpoint');
  });
});
