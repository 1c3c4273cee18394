import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { waitForTaskPhase, WorkerChildren } from '../support/worker-children.js';
import { createTask, download, getTask, holdOf, waitForTerminal } from './support/video-helpers.js';

/**
 * A worker process is killed with SIGKILL in the middle of a task; another worker takes over.
 * Whatever the moment, the client ends with one video and the wallet with one charge.
 */
describe('video worker killed mid-task', () => {
  let api: TestApp;
  let account: TestAccount;
  const workers = new WorkerChildren(() => api);
  const extraApps: TestApp[] = [];
  /** The worker children's temporary folder (TMPDIR), where the sandbox renders videos. */
  const childTmpDir = mkdtempSync(join(tmpdir(), 'svc-videokill-'));

  before(async () => {
    api = await bootTestApp({ label: 'videokill', env: { APP_ROLE: 'api' } });
    account = await createAccount(api, { creditUsd: 50 });
  });
  after(async () => {
    workers.killAll();
    for (const app of extraApps) await app.close();
    await api.close();
    rmSync(childTmpDir, { recursive: true, force: true });
  });

  /** A worker child that may reach private HTTP fakes, rendering into `childTmpDir`. */
  const startChildWorker = () => workers.start({ tmpDir: childTmpDir, env: { OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOW_PRIVATE: 'true' } });
  const waitForPhase = (id: string, phase: string, timeoutMs?: number) => waitForTaskPhase(api, 'video_task', id, phase, timeoutMs);

  async function assertOneVideoOneCharge(id: string, expectedMicros: bigint): Promise<void> {
    const task = await waitForTerminal(api, account, id, 90_000);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.outputs.videos.length, 1);
    await download(task.outputs.videos[0]!);
    const hold = await holdOf(api, id);
    assert.equal(hold.holds, 1);
    assert.equal(hold.status, 'settled');
    assert.equal(hold.captured, expectedMicros);
    const captures = await api.db.query(`SELECT 1 FROM ledger_entry l JOIN hold h ON h.id = l.hold_id WHERE h.subject_id = $1 AND l.kind = 'capture'`, [id]);
    assert.equal(captures.length, 1);
    const objects = await api.db.query(`SELECT 1 FROM media_object WHERE key LIKE $1 AND deleted_at IS NULL`, [`video/%/${id.slice(5)}.mp4`]);
    assert.equal(objects.length, 1);
  }

  it('killed while the upstream is generating: a new worker resumes from the row', async () => {
    const first = await startChildWorker();
    const created = await createTask(api, account, { model: 'vendor-omni-flash-preview', prompt: 'kill me [sandbox:delay=2500]', controls: { duration: 3 } });
    await waitForPhase(created.body.id, 'generating');
    await workers.kill(first);
    assert.equal((await getTask(api, account, created.body.id)).status, 'running');
    await startChildWorker();
    await assertOneVideoOneCharge(created.body.id, 240_000n);
  });

  it('killed while storing the video, then Redis flushed: the reconciler re-enqueues and it ends with one video, one charge', async () => {
    const first = await startChildWorker();
    const created = await createTask(api, account, {
      model: 'vendor-omni-1.1-flash-preview',
      prompt: 'big one',
      controls: { duration: 10, resolution: '4k' },
    });
    await waitForPhase(created.body.id, 'storing', 60_000);
    // The sandbox's ffmpeg writes the video into the worker's temporary folder: once the file is
    // there, ffmpeg is running.
    await eventually(() => readdir(childTmpDir), (names) => names.some((n) => n.startsWith('svc-video-')), 'ffmpeg starting to write the video');
    await workers.kill(first);
    await api.flushRedis();
    // Another worker (in this process) boots: its boot-time reconcile finds the task's job missing.
    const second = await bootTestApp({ label: 'videokill2', db: api.db, env: { APP_ROLE: 'worker', QUEUE_PREFIX: api.queuePrefix, MEDIA_DIR: api.mediaDir } });
    extraApps.push(second);
    await assertOneVideoOneCharge(created.body.id, 3_000_000n);
  });
});
