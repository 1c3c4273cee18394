import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { waitForTaskPhase, WorkerChildren } from '../support/worker-children.js';
import { FakeKlingServer } from '../fakes/kling-server.js';
import { createAlt, download, isMp4, klingEnv, ledgerOf, SECRET_A, storedObjects, waitForAltTerminal } from './support/alternate-helpers.js';

/**
 * A worker process is SIGKILLed while it downloads the finished video from the upstream; another
 * worker resumes from the row: one stored video, one capture.
 */
describe('alternate worker killed mid-download', () => {
  const fake = new FakeKlingServer();
  let api: TestApp;
  let account: TestAccount;
  const workers = new WorkerChildren(() => api);

  before(async () => {
    await fake.start();
    api = await bootTestApp({ label: 'altkill', env: { APP_ROLE: 'api', ...klingEnv(fake) } });
    account = await createAccount(api, { creditUsd: 10 });
  });
  after(async () => {
    workers.killAll();
    await api.close();
    await fake.stop();
  });

  const startWorker = () => workers.start({ env: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOW_PRIVATE: 'true', ...klingEnv(fake) } });

  it('one video, one charge', async () => {
    let release!: () => void;
    fake.holdDownloads = new Promise<void>((resolve) => (release = resolve));
    const first = await startWorker();
    const created = await createAlt(api, account, { prompt: 'kill me mid-download', duration: 5 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    fake.finish(id, 'succeed');
    // The callback (answered by the API process) moves the task to storing and wakes its job.
    assert.equal((await fake.callback(id, { secrets: [SECRET_A] })).status, 200);
    await waitForTaskPhase(api, 'alternate_task', id, 'storing');
    const upstreamId = fake.byExternal(id)!.taskId;
    await eventually(async () => fake.downloads.filter((d) => d === upstreamId).length, (n) => n === 1, 'the worker downloading');
    await workers.kill(first);
    fake.holdDownloads = null;
    release();
    await startWorker();
    const task = await waitForAltTerminal(api, account, id, 90_000);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.ok(isMp4(await download(task.outputs.videos[0]!)));
    assert.ok(fake.downloads.filter((d) => d === upstreamId).length >= 2, 'downloaded again by the second worker');
    const ledger = await ledgerOf(api, id);
    assert.equal(ledger.holds.length, 1);
    assert.equal(ledger.holds[0]!.status, 'settled');
    assert.equal(ledger.holds[0]!.captured, 350_000n);
    assert.equal(ledger.captures, 1);
    assert.equal(await storedObjects(api, id), 1);
    assert.equal(fake.creates.filter((c) => c.body.external_task_id === id).length, 1);
  });
});
