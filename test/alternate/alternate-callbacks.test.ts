import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KlingAdapter } from '../../libs/providers/index.js';
import { eventually } from '../support/eventually.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { FakeKlingServer } from '../fakes/kling-server.js';
import { createAlt, getAlt, klingEnv, ledgerOf, rowOf, SECRET_A, SECRET_B, SECRET_UNKNOWN, waitForAltTerminal } from './support/alternate-helpers.js';

const CALLBACKS = '/internal/alternate/callbacks';

/**
 * `POST /internal/alternate/callbacks`: Standard Webhooks signatures over the exact raw body,
 * any configured secret (rotation), several signatures, a five-minute window; refusals are 401
 * and change nothing; a verified callback is 200 whatever it changes; a replayed `webhook-id`
 * is a no-op. Polling is slowed to a minute here, so only callbacks move the tasks.
 */
describe('alternate callbacks: verification, rotation, replay, unknown tasks', () => {
  const fake = new FakeKlingServer();
  let t: TestApp;
  let account: TestAccount;

  before(() => fake.start());
  fundedAppForSuite(() => ({ label: 'altcallbacks', creditUsd: 20, env: klingEnv(fake) }), (booted) => {
    ({ t, account } = booted);
    const adapter = t.app.get(KlingAdapter);
    adapter.tuning.pollBaseMs = 60_000;
    adapter.tuning.pollMaxMs = 60_000;
  });
  after(() => fake.stop());

  /** A task the upstream has finished, that only a callback can tell us about. */
  async function finishedUpstream(): Promise<string> {
    const created = await createAlt(t, account, { prompt: 'callback me', duration: 5 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    fake.finish(created.body.id, 'succeed');
    return created.body.id as string;
  }

  async function assertUntouched(id: string): Promise<void> {
    const row = await rowOf(t, id);
    assert.equal(row.status, 'queued');
    assert.equal(row.phase, 'generating');
    assert.equal((await ledgerOf(t, id)).holds[0]!.status, 'open');
  }

  const refusals: Array<[string, (id: string) => Promise<{ status: number; body: any }>]> = [
    ['a tampered body', (id) => fake.callback(id, { secrets: [SECRET_A], tamper: true })],
    ['a six-minute-old timestamp', (id) => fake.callback(id, { secrets: [SECRET_A], timestamp: Math.floor(Date.now() / 1000) - 360 })],
    ['a timestamp six minutes ahead', (id) => fake.callback(id, { secrets: [SECRET_A], timestamp: Math.floor(Date.now() / 1000) + 360 })],
    ['an unknown secret', (id) => fake.callback(id, { secrets: [SECRET_UNKNOWN] })],
    ['no signature headers', (id) => fake.callback(id, { secrets: [SECRET_A], unsigned: true })],
  ];

  for (const [name, send] of refusals) {
    it(`refuses ${name}: 401 provider.invalid_signature, nothing changes`, async () => {
      const id = await finishedUpstream();
      const answer = await send(id);
      assert.equal(answer.status, 401);
      assert.equal(answer.body.error_code, 'provider.invalid_signature');
      assert.deepEqual(answer.body.error_params, { provider: 'kling', status: 401, upstreamCode: 0 });
      await assertUntouched(id);
      // The same event, correctly signed, is still accepted afterwards.
      assert.equal((await fake.callback(id, { secrets: [SECRET_A] })).status, 200);
      assert.equal((await waitForAltTerminal(t, account, id)).status, 'succeeded');
    });
  }

  it('accepts a valid callback signed with the first secret and moves the task', async () => {
    const id = await finishedUpstream();
    const answer = await fake.callback(id, { secrets: [SECRET_A] });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { received: true });
    const task = await waitForAltTerminal(t, account, id);
    assert.equal(task.status, 'succeeded');
    assert.equal((await ledgerOf(t, id)).captures, 1);
  });

  it('accepts the second of two configured secrets (rotation)', async () => {
    const id = await finishedUpstream();
    assert.equal((await fake.callback(id, { secrets: [SECRET_B] })).status, 200);
    assert.equal((await waitForAltTerminal(t, account, id)).status, 'succeeded');
  });

  it('accepts several space-separated signatures of which one is valid', async () => {
    const id = await finishedUpstream();
    assert.equal((await fake.callback(id, { secrets: [SECRET_UNKNOWN, SECRET_B, SECRET_UNKNOWN] })).status, 200);
    assert.equal((await waitForAltTerminal(t, account, id)).status, 'succeeded');
  });

  it('answers 200 for an unknown task and changes nothing', async () => {
    const before = await t.db.query(`SELECT id, status, phase, updated_at FROM alternate_task ORDER BY id`);
    const unknown = 'alt:00000000-0000-4000-8000-000000000000';
    const answer = await fake.callback(unknown, {
      url: `${t.baseUrl}${CALLBACKS}`,
      secrets: [SECRET_A],
      body: { task_id: '123', task_status: 'succeed', task_info: { external_task_id: unknown }, task_result: { videos: [{ url: `${fake.baseUrl}/videos/123.mp4`, duration: '5' }] } },
    });
    assert.equal(answer.status, 200);
    const notOurs = await fake.callback(unknown, { url: `${t.baseUrl}${CALLBACKS}`, secrets: [SECRET_A], body: { hello: 'world' } });
    assert.equal(notOurs.status, 200);
    assert.deepEqual(await t.db.query(`SELECT id, status, phase, updated_at FROM alternate_task ORDER BY id`), before);
  });

  it('a replayed webhook-id is a no-op, even with a new body; a new id applies', async () => {
    const created = await createAlt(t, account, { prompt: 'replay', duration: 5 });
    const id = created.body.id as string;
    const upstream = fake.byExternal(id)!;
    const processing = fake.taskObject({ ...upstream, status: 'processing' });
    assert.equal((await fake.callback(id, { secrets: [SECRET_A], webhookId: 'msg_replay_1', body: processing })).status, 200);
    assert.equal((await getAlt(t, account, id)).status, 'running');
    fake.finish(id, 'succeed');
    const replay = await fake.callback(id, { secrets: [SECRET_A], webhookId: 'msg_replay_1' });
    assert.equal(replay.status, 200);
    assert.equal((await rowOf(t, id)).phase, 'generating', 'the replayed id changed nothing');
    assert.equal((await fake.callback(id, { secrets: [SECRET_A], webhookId: 'msg_replay_2' })).status, 200);
    assert.equal((await waitForAltTerminal(t, account, id)).status, 'succeeded');
    // A duplicate of the terminal event (new id) after success: 200, still one capture.
    assert.equal((await fake.callback(id, { secrets: [SECRET_A], webhookId: 'msg_replay_3' })).status, 200);
    assert.equal((await ledgerOf(t, id)).captures, 1);
  });

  it('a callback naming another upstream task id than the recorded one changes nothing', async () => {
    const id = await finishedUpstream();
    const upstream = fake.byExternal(id)!;
    const forged = fake.taskObject({ ...upstream, taskId: '999999999999' });
    assert.equal((await fake.callback(id, { secrets: [SECRET_A], body: forged })).status, 200);
    await assertUntouched(id);
    assert.equal((await fake.callback(id, { secrets: [SECRET_A] })).status, 200);
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'succeeded', 'task succeeded');
  });

  it('the route needs no API key and refuses bodies over its small limit', async () => {
    const big = JSON.stringify({ task_id: '1', task_status: 'processing', padding: 'x'.repeat(70 * 1024) });
    const response = await t.request(CALLBACKS, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    assert.equal(response.status, 413);
    const unsigned = await t.request(CALLBACKS, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unsigned.status, 401);
  });
});
