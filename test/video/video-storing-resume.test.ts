import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { SandboxVideoProvider, VideoDownloadError } from '../../libs/providers/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { MAX_STORING_MS, VideoTaskRunner } from '../../src/modules/video/video-task.runner.js';
import { Queues } from '../../src/queue/queues.js';
import { WorkReconciler } from '../../src/queue/work-reconciler.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, download, getTask, holdOf, wallet } from './support/video-helpers.js';
import { VIDEO_PROCESS_JOB, VIDEO_QUEUE } from '../../src/modules/video/video-jobs.js';

/**
 * The `storing` phase after a crash, driven step by step on an API-only app (no worker of its
 * own), so each test decides exactly where the "killed" worker stopped.
 */
describe('video tasks: resuming the storing phase', () => {
  let t: TestApp;
  let clock: ManualClock;
  let account: TestAccount;
  let runner: VideoTaskRunner;

  before(async () => {
    clock = new ManualClock(new Date());
    t = await bootTestApp({ label: 'videoresume', clock, env: { APP_ROLE: 'api' } });
    account = await createAccount(t, { creditUsd: 10 });
    runner = t.app.get(VideoTaskRunner);
  });
  after(async () => {
    await t.close();
  });

  /** Creates a task and brings it to where the upstream has just reported success (phase `storing`). */
  async function taskInStoring(): Promise<string> {
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'resume me', controls: { duration: 3 } });
    assert.equal(created.status, 200);
    const id = created.body.id as string;
    await t.db.query(`UPDATE video_task SET status = 'running', phase = 'generating', upstream_operation = $2, submitted_at = now() WHERE id = $1`, [
      id,
      `sandbox/operations/${id}/0`,
    ]);
    await t.db.query(`UPDATE video_task SET phase = 'storing', completed_at = $2, expires_at = $3 WHERE id = $1`, [
      id,
      clock.now(),
      new Date(clock.now().getTime() + 7 * 86400_000),
    ]);
    return id;
  }

  /** Counts the sandbox's downloads until `restore()`. */
  function countDownloads(): { count: () => number; restore: () => void } {
    const sandbox = t.app.get(SandboxVideoProvider);
    const original = sandbox.download.bind(sandbox);
    let n = 0;
    sandbox.download = async (...args) => {
      n++;
      return original(...args);
    };
    return { count: () => n, restore: () => (sandbox.download = original) };
  }

  it('killed after storing, and again after settling: one download, one charge, and the upstream is not asked again', async () => {
    const before = await wallet(t, account);
    const id = await taskInStoring();
    const walletService = t.app.get(WalletService);
    const originalSettle = walletService.settle.bind(walletService);
    const downloads = countDownloads();
    try {
      // 1. The worker stores the video, records it, and "dies" as it settles.
      walletService.settle = async () => {
        throw new Error('worker killed');
      };
      await assert.rejects(runner.run(id), /worker killed/);
      walletService.settle = originalSettle;
      const [stored] = await t.db.query<{ media_key: string | null; status: string }>('SELECT media_key, status FROM video_task WHERE id = $1', [id]);
      assert.ok(stored!.media_key, 'the stored video is recorded on the row');
      assert.equal(stored!.status, 'running');
      assert.equal((await holdOf(t, id)).status, 'open');

      // 2. The upstream has since forgotten the operation: a re-poll would fail the task. The
      //    re-run must not ask it again; it settles and finishes.
      await t.db.query(`UPDATE video_task SET upstream_operation = 'sandbox/operations/forgotten/0' WHERE id = $1`, [id]);
      assert.equal((await runner.run(id)).kind, 'done');
      assert.equal((await getTask(t, account, id)).status, 'succeeded');

      // 3. As if the worker had died after the settlement but before marking the task done.
      await t.db.query(`UPDATE video_task SET status = 'running', phase = 'storing' WHERE id = $1`, [id]);
      assert.equal((await runner.run(id)).kind, 'done');
    } finally {
      downloads.restore();
      walletService.settle = originalSettle;
    }
    assert.equal(downloads.count(), 1, 'the video was fetched once');
    const task = await getTask(t, account, id);
    assert.equal(task.status, 'succeeded');
    await download(task.outputs.videos[0]!);
    const hold = await holdOf(t, id);
    assert.equal(hold.status, 'settled');
    assert.equal(hold.captured, 240_000n);
    const ledger = await t.db.query<{ kind: string; n: string }>(
      `SELECT kind, count(*) AS n FROM ledger_entry WHERE subject_id = $1 GROUP BY kind ORDER BY kind`,
      [id],
    );
    assert.deepEqual(
      ledger.map((r) => [r.kind, Number(r.n)]),
      [
        ['capture', 1],
        ['hold', 1],
        ['release', 1],
      ],
    );
    const afterWallet = await wallet(t, account);
    assert.equal(Math.round((before.balanceUsd - afterWallet.balanceUsd) * 1e6) / 1e6, 0.24);
    assert.equal(afterWallet.heldUsd, before.heldUsd);
  });

  it('a finished video that cannot be fetched for an hour fails the task and releases the hold', async () => {
    const before = await wallet(t, account);
    const id = await taskInStoring();
    const sandbox = t.app.get(SandboxVideoProvider);
    const originalDownload = sandbox.download.bind(sandbox);
    sandbox.download = async () => {
      throw new VideoDownloadError('download reset by peer', true);
    };
    try {
      assert.equal((await runner.run(id)).kind, 'wait', 'a retryable download error waits and tries again');
      assert.equal((await getTask(t, account, id)).status, 'running');
      clock.advance(MAX_STORING_MS + 1000);
      assert.equal((await runner.run(id)).kind, 'done');
    } finally {
      sandbox.download = originalDownload;
    }
    const task = await getTask(t, account, id);
    assert.equal(task.status, 'failed');
    assert.match(task.failureReason ?? '', /could not be fetched/);
    assert.equal((await holdOf(t, id)).status, 'released');
    assert.deepEqual(await wallet(t, account), before);
  });

  it('a succeeded task whose media object went missing still answers, with no link', async () => {
    const id = await taskInStoring();
    await runner.run(id);
    const [row] = await t.db.query<{ media_key: string }>('SELECT media_key FROM video_task WHERE id = $1', [id]);
    await t.app.get(MediaService).delete(row!.media_key);
    const task = await getTask(t, account, id);
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(task.outputs.videos, []);
    const list = await t.request('/v1/contents/generations/tasks?limit=100', { key: account.key });
    assert.equal(list.status, 200);
  });

  it('duplicate runs of one task (a duplicate job, a stalled job re-run) end with one submit, one video and one charge', async () => {
    const before = await wallet(t, account);
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'run me thrice', controls: { duration: 3 } });
    const id = created.body.id as string;
    const sandbox = t.app.get(SandboxVideoProvider);
    const downloads = countDownloads();
    try {
      // Three workers pick the same task at once; each keeps going until it is done or has to wait.
      const drive = async () => {
        for (let i = 0; i < 20; i++) {
          const step = await runner.run(id);
          if (step.kind === 'done') return;
          await new Promise((resolve) => setTimeout(resolve, Math.min(step.ms, 300)));
        }
      };
      await Promise.all([drive(), drive(), drive()]);
    } finally {
      downloads.restore();
    }
    const task = await getTask(t, account, id);
    assert.equal(task.status, 'succeeded');
    assert.equal(sandbox.submissions.get(id), 1, 'sent upstream once');
    assert.ok(downloads.count() >= 1 && downloads.count() <= 3, `downloads ${downloads.count()}`);
    const hold = await holdOf(t, id);
    assert.equal(hold.status, 'settled');
    assert.equal(hold.captured, 240_000n);
    const [captures] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_entry WHERE subject_id = $1 AND kind = 'capture'`, [id]);
    assert.equal(Number(captures!.n), 1);
    const afterWallet = await wallet(t, account);
    assert.equal(Math.round((before.balanceUsd - afterWallet.balanceUsd) * 1e6) / 1e6, 0.24);
    assert.equal(afterWallet.heldUsd, before.heldUsd);
  });

  it('the reconciler re-enqueues a missing job with its retry options', async () => {
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'requeue me', controls: { duration: 3 } });
    const id = created.body.id as string;
    const queues = t.app.get(Queues);
    const job = await queues.getJob(VIDEO_QUEUE, `video:${id}`);
    assert.ok(job, 'creation enqueued a job');
    assert.equal(job.name, VIDEO_PROCESS_JOB);
    await job.remove();
    const report = await t.app.get(WorkReconciler).reconcile();
    assert.ok(report.enqueued >= 1);
    const again = await queues.getJob(VIDEO_QUEUE, `video:${id}`);
    assert.ok(again, 'the reconciler enqueued it again');
    assert.equal(again.opts.attempts, 8);
    assert.deepEqual(again.opts.backoff, { type: 'exponential', delay: 2000 });
  });
});
