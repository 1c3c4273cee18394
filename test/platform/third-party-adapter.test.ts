/**
 * Seam: an upstream adapter added from outside src/. ThirdPartyVideoModule contributes a third
 * video adapter (`acme-video`) for one model; PROVIDER_ROUTES routes that model to it. No core
 * file knows it: the registry finds it in the container at boot, the task keeps it, the worker
 * looks it up by name. Other models and svc_test_ keys keep the sandbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SandboxVideoProvider } from '../../libs/providers/index.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, holdOf, waitForTerminal } from '../video/support/video-helpers.js';
import { THIRD_PARTY_MODEL, ThirdPartyVideoAdapter, ThirdPartyVideoModule } from './third-party-adapter.module.js';

const OTHER_MODEL = 'vendor-omni-flash-preview';

async function adapterOf(t: TestApp, taskId: string): Promise<string> {
  const rows = await t.db.query<{ adapter: string }>('SELECT adapter FROM video_task WHERE id = $1', [taskId]);
  return rows[0]!.adapter;
}

describe('a third video adapter from a module outside src/, routed to one model', () => {
  let t: TestApp;
  let live: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'thirdparty', imports: [ThirdPartyVideoModule], env: { PROVIDER_ROUTES: `${THIRD_PARTY_MODEL}:acme-video` } });
    live = await createAccount(t, { creditUsd: 10 });
  });
  after(async () => {
    await t.close();
  });

  it('serves a live task for the routed model end to end, charged like any other', async () => {
    const created = await createTask(t, live, { model: THIRD_PARTY_MODEL, prompt: 'a red fox running through snow' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(await adapterOf(t, created.body.id), 'acme-video');
    // Rendering shares the machine with other suites: a generous cap.
    const task = await waitForTerminal(t, live, created.body.id, 180_000);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.outputs.videos.length, 1);
    assert.deepEqual(t.app.get(ThirdPartyVideoAdapter).submitted, [created.body.id]);
    assert.equal(t.app.get(SandboxVideoProvider).submissions.get(created.body.id), undefined);
    const hold = await holdOf(t, created.body.id);
    assert.deepEqual({ status: hold.status, amount: hold.amount, captured: hold.captured }, { status: 'settled', amount: 1_000_000n, captured: 500_000n });
  });

  it('leaves the other model, and every svc_test_ key, to the sandbox', async () => {
    // Held in generation by the directive: what matters here is who was sent the job.
    const prompt = 'a quiet lake at dawn [sandbox:delay=600000]';
    const other = await createTask(t, live, { model: OTHER_MODEL, prompt });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    const test = await createAccount(t, { creditUsd: 10, environment: 'test' });
    const sandboxed = await createTask(t, test, { model: THIRD_PARTY_MODEL, prompt });
    assert.equal(sandboxed.status, 200, JSON.stringify(sandboxed.body));
    const sandbox = t.app.get(SandboxVideoProvider);
    for (const id of [other.body.id, sandboxed.body.id]) {
      assert.equal(await adapterOf(t, id), 'sandbox');
      await eventually(async () => sandbox.submissions.get(id), (count) => count === 1, `the sandbox receiving ${id}`);
    }
    const sentToAcme = t.app.get(ThirdPartyVideoAdapter).submitted;
    assert.deepEqual(sentToAcme.filter((id) => id === other.body.id || id === sandboxed.body.id), []);
  });
});
