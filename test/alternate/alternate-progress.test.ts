import assert from 'node:assert/strict';
import { before, after, describe, it } from 'node:test';
import { KlingAdapter } from '../../libs/providers/index.js';
import { eventually } from '../support/eventually.js';
import type { TestAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { FakeKlingServer } from '../fakes/kling-server.js';
import { createAlt, download, getAlt, isMp4, klingEnv, ledgerOf, rowOf, SECRET_A, SECRET_B, storedObjects, waitForAltTerminal, wallet } from './support/alternate-helpers.js';

/**
 * The live `kling` adapter against the fake Kling server: the task reaches `succeeded` through
 * polling alone, through a callback alone, and through both racing — always one video and one
 * capture; a lost create answer is found by `external_task_id` without a second create.
 */
describe('alternate tasks on the kling adapter: polling, callbacks, races, lost answers', () => {
  const fake = new FakeKlingServer();
  let t: TestApp;
  let account: TestAccount;

  before(() => fake.start());
  fundedAppForSuite(() => ({ label: 'altprogress', creditUsd: 20, env: klingEnv(fake) }), (booted) => {
    ({ t, account } = booted);
    const adapter = t.app.get(KlingAdapter);
    adapter.tuning.pollBaseMs = 100;
    adapter.tuning.pollMaxMs = 200;
    adapter.tuning.reconcileDelayMs = 200;
  });
  after(() => fake.stop());

  async function assertOneVideoOneCharge(id: string, micros: bigint): Promise<void> {
    const task = await waitForAltTerminal(t, account, id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.ok(isMp4(await download(task.outputs.videos[0]!)));
    const ledger = await ledgerOf(t, id);
    assert.equal(ledger.holds.length, 1);
    assert.equal(ledger.holds[0]!.status, 'settled');
    assert.equal(ledger.holds[0]!.captured, micros);
    assert.equal(ledger.captures, 1);
    assert.equal(await storedObjects(t, id), 1);
  }

  it('succeeds through polling only (no callback): the JWT, the body and our id reach the upstream', async () => {
    fake.finishOnQuery = true;
    fake.queriesHideTerminal = false;
    const created = await createAlt(t, account, { prompt: 'a lighthouse at dusk', negativePrompt: 'blur', duration: 10, mode: 'pro', aspectRatio: '1:1' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const sent = fake.creates.find((c) => c.body.external_task_id === created.body.id)!;
    assert.equal(sent.kind, 'text2video');
    assert.deepEqual(
      { ...sent.body, callback_url: undefined },
      { model_name: 'kling-v2-6', prompt: 'a lighthouse at dusk', negative_prompt: 'blur', mode: 'pro', duration: '10', aspect_ratio: '1:1', external_task_id: created.body.id, callback_url: undefined },
    );
    assert.equal(sent.body.callback_url, `${t.baseUrl}/internal/alternate/callbacks`);
    assert.equal(sent.claims.iss, fake.accessKey);
    assert.ok(sent.claims.exp - sent.claims.nbf <= 1800);
    // 10 s pro: 1.40 USD; the fake's clip is 10 s.
    await assertOneVideoOneCharge(created.body.id, 1_400_000n);
    assert.equal(fake.authFailures.length, 0);
  });

  it('succeeds through the callback only (polls never see the end)', async () => {
    fake.queriesHideTerminal = true;
    const created = await createAlt(t, account, { prompt: 'waves', duration: 5 });
    assert.equal(created.status, 200);
    const id = created.body.id as string;
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'running', 'task running');
    fake.finish(id, 'succeed');
    const answer = await fake.callback(id, { secrets: [SECRET_A] });
    assert.equal(answer.status, 200);
    await assertOneVideoOneCharge(id, 350_000n);
    const metrics = await (await t.request('/metrics')).text();
    assert.ok((metricSample(metrics, 'svc_alternate_terminal_first_total', '{source="callback"}') ?? 0) >= 1);
    fake.queriesHideTerminal = false;
  });

  it('polling and callbacks racing for the same result: one transition, one video, one capture', async () => {
    fake.finishOnQuery = false;
    const created = await createAlt(t, account, { prompt: 'race', duration: 5 });
    const id = created.body.id as string;
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'running', 'task running');
    fake.finish(id, 'succeed');
    // The next poll (≤ 200 ms away) and three callbacks (each its own webhook-id) all see `succeed`.
    const answers = await Promise.all([fake.callback(id, { secrets: [SECRET_A] }), fake.callback(id, { secrets: [SECRET_B] }), fake.callback(id, { secrets: [SECRET_A] })]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    await assertOneVideoOneCharge(id, 350_000n);
    fake.finishOnQuery = true;
  });

  it('a succeed callback without a video while the upstream still processes: polling resumes, the video arrives', async () => {
    fake.finishOnQuery = false;
    const created = await createAlt(t, account, { prompt: 'early word', duration: 5 });
    const id = created.body.id as string;
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'running', 'task running');
    const task = fake.byExternal(id)!;
    const early = { ...fake.taskObject({ ...task, status: 'succeed' }), task_result: {} };
    assert.equal((await fake.callback(id, { secrets: [SECRET_A], body: early })).status, 200);
    // The worker asks for the video, hears `processing`, and goes back to polling: not failed.
    const queriesBefore = task.queries;
    await eventually(() => rowOf(t, id), (row) => row.phase === 'generating' && task.queries > queriesBefore + 1, 'polling again after the early callback');
    assert.equal((await getAlt(t, account, id)).status, 'running');
    fake.finish(id, 'succeed');
    await assertOneVideoOneCharge(id, 350_000n);
    fake.finishOnQuery = true;
  });

  it('a late failure callback after success changes nothing', async () => {
    const created = await createAlt(t, account, { prompt: 'late', duration: 5 });
    const id = created.body.id as string;
    await assertOneVideoOneCharge(id, 350_000n);
    const task = fake.byExternal(id)!;
    const answer = await fake.callback(id, { secrets: [SECRET_A], body: { ...fake.taskObject({ ...task, status: 'failed' }) } });
    assert.equal(answer.status, 200);
    assert.equal((await getAlt(t, account, id)).status, 'succeeded');
    assert.equal((await ledgerOf(t, id)).captures, 1);
  });

  it('a lost create answer: reconciliationRequired, found by external_task_id, never created twice', async () => {
    fake.createScript = ['lose'];
    const before = fake.creates.length;
    const created = await createAlt(t, account, { prompt: 'lost answer', duration: 5 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.phase, 'reconciliationRequired');
    assert.equal(created.body.status, 'queued');
    const id = created.body.id as string;
    await assertOneVideoOneCharge(id, 350_000n);
    assert.equal(fake.creates.length - before, 1, 'one create only');
    assert.ok(fake.queries.some((q) => q.id === id), 'looked up by external_task_id');
    assert.equal((await rowOf(t, id)).upstream_task_id, fake.byExternal(id)!.taskId);
  });

  it('DELETE on both paths asks nothing of the upstream: 405, hold open, the task goes on', async () => {
    fake.finishOnQuery = false;
    const created = await createAlt(t, account, { prompt: 'keep going', duration: 5 });
    const id = created.body.id as string;
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'running', 'task running');
    const upstreamId = fake.byExternal(id)!.taskId;
    const seen = fake.requests.length;
    for (const path of [`/v1/contents/generations/tasks/${id}`, `/contents/generations/tasks/${id}`]) {
      const response = await t.request(path, { method: 'DELETE', key: account.key });
      assert.equal(response.status, 405);
      assert.equal(((await response.json()) as any).error_code, 'provider.operation_not_supported');
    }
    // Only polls reached the upstream meanwhile: no cancel, no delete, no second create.
    assert.ok(fake.requests.slice(seen).every((r) => r === `GET /v1/videos/text2video/${upstreamId}`), fake.requests.slice(seen).join(', '));
    assert.equal((await ledgerOf(t, id)).holds[0]!.status, 'open');
    fake.finish(id, 'succeed');
    fake.finishOnQuery = true;
    await assertOneVideoOneCharge(id, 350_000n);
  });

  it('an upstream failure releases the hold and shows a fixed reason', async () => {
    fake.finishOnQuery = false;
    const before = await wallet(t, account);
    const created = await createAlt(t, account, { prompt: 'unsafe', duration: 5 });
    const id = created.body.id as string;
    await eventually(() => getAlt(t, account, id), (task) => task.status === 'running', 'task running');
    fake.finish(id, 'failed');
    const task = await waitForAltTerminal(t, account, id);
    assert.equal(task.status, 'failed');
    assert.equal(task.failureReason, 'the video provider failed to generate the video');
    assert.equal(task.usage.chargedUsd, 0);
    const ledger = await ledgerOf(t, id);
    assert.equal(ledger.holds[0]!.status, 'released');
    assert.equal(ledger.captures, 0);
    assert.equal((await wallet(t, account)).balanceUsd, before.balanceUsd);
    fake.finishOnQuery = true;
  });

  it('each refusal of the live upstream answers its status with upstreamCode; nothing held', async () => {
    for (const [code, status] of [[1002, 401], [1101, 429], [1103, 403], [1201, 400], [1203, 404], [1301, 400], [1303, 429], [5001, 503]] as const) {
      const before = await wallet(t, account);
      fake.createScript = [{ refuse: code }];
      const answer = await createAlt(t, account, { prompt: 'refused' });
      assert.equal(answer.status, status, `code ${code}`);
      assert.deepEqual(answer.body.error_params, { provider: 'kling', status, upstreamCode: code });
      assert.equal(answer.body.error_code, 'provider.request_failed');
      assert.ok(!answer.body.error.includes('fake error'), 'no upstream message text');
      const now = await wallet(t, account);
      assert.equal(now.heldUsd, 0);
      assert.equal(now.balanceUsd, before.balanceUsd);
    }
  });
});
