/**
 * Attacked: Redis losing every queue key while video tasks are mid-flight — a FLUSHDB, or a
 * restart without persistence after an outage — with no process restarted afterwards.
 * How: the app boots with a 2 s reconcile interval and reaches Redis through a TCP proxy the
 * test can cut. Several sandbox video tasks are held in `generating` by `[sandbox:delay=…]`
 * (their jobs wait in the delayed set). Then every Redis key of this app is deleted
 * (`flushRedis()`: only this app's queue prefix, never FLUSHDB, since other suites share this
 * Redis) — once while connected, once while the proxy is cut (Redis down, then back empty).
 * The job schedulers (reconciler, sweeps) went with the keys; they used to be registered only
 * at worker boot, so the tasks stayed stuck until a restart.
 * Asserted: the schedulers and every task's job come back on their own (the time taken is
 * printed), the maintenance worker runs periodic work again, every task ends `succeeded`
 * through the API, each hold was captured exactly once with the wallet right, and the
 * connection errors meanwhile went to the log instead of a stack trace per attempt on stderr.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { microsToUsd, usdToMicros } from '../../libs/common/index.js';
import { videoListCost } from '../support/list-prices.js';
import { VIDEO_QUEUE, videoJobId } from '../../src/modules/video/video-jobs.js';
import { MAINTENANCE_QUEUE } from '../../src/queue/queue-names.js';
import { Queues } from '../../src/queue/queues.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { proxyToTestRedis, type TcpProxy } from '../support/tcp-proxy.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, holdOf, waitForTerminal, wallet } from '../video/support/video-helpers.js';

const RECONCILE_INTERVAL_MS = 2000;
const CREDIT_USD = 20;
const TASKS = 4;
/** Long enough that every task is still generating when Redis loses its keys. */
const GENERATION_DELAY_MS = 5000;
/** The bound on waiting for recovery: far above the promise, so only a real loss fails. */
const RECOVERY_CAP_MS = 15 * RECONCILE_INTERVAL_MS;
const MODEL = 'vendor-omni-flash-preview';
const CHARGE = videoListCost(MODEL, '720p', 3);

describe('Redis loses the queue keys with video tasks in flight: recovery without a restart', () => {
  let t: TestApp;
  let redisProxy: TcpProxy;
  let queues: Queues;

  before(async () => {
    const redis = await proxyToTestRedis();
    redisProxy = redis.proxy;
    t = await bootTestApp({ label: 'redisflush', env: { RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS), REDIS_URL: redis.url } });
    queues = t.app.get(Queues);
  });
  after(async () => {
    await redisProxy.restore();
    await t.close();
    await redisProxy.cut();
  });

  const schedulerIds = async () => (await queues.get(MAINTENANCE_QUEUE).getJobSchedulers()).map((s) => s.key).sort();
  const jobsPresent = async (ids: string[]) =>
    Promise.all(ids.map(async (id) => (await queues.getJob(VIDEO_QUEUE, videoJobId(id))) !== undefined));

  /** Creates the tasks and waits until each is generating, its job waiting in the delayed set. */
  async function tasksInFlight(account: TestAccount, label: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const created = await createTask(t, account, { model: MODEL, prompt: `${label} ${i} [sandbox:delay=${GENERATION_DELAY_MS}]`, controls: { duration: 3 } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      ids.push(created.body.id as string);
    }
    await eventually(
      async () => (await t.db.query<{ phase: string | null }>(`SELECT phase FROM video_task WHERE id = ANY($1)`, [ids])).map((r) => r.phase),
      (phases) => phases.every((phase) => phase === 'generating'),
      'every task generating',
      30_000,
    );
    return ids;
  }

  /** Waits until the schedulers and the tasks' jobs are back, prints how long it took from `since`. */
  async function awaitRecovery(ids: string[], schedulers: string[], since: number, what: string): Promise<void> {
    await eventually(
      async () => ({ schedulers: await schedulerIds(), jobs: await jobsPresent(ids) }),
      (seen) => seen.schedulers.join() === schedulers.join() && seen.jobs.every(Boolean),
      'schedulers and task jobs back',
      RECOVERY_CAP_MS,
    );
    console.log(`[redis-flush-recovery] ${what}: schedulers and ${ids.length} task jobs back after ${Date.now() - since} ms (reconcile interval ${RECONCILE_INTERVAL_MS} ms)`);
    // The maintenance worker resumed too: a periodic job finishes after the loss.
    await eventually(
      async () => (await queues.get(MAINTENANCE_QUEUE).getJobs(['completed'])).some((job) => (job.finishedOn ?? 0) > since),
      Boolean,
      'a periodic job completing after the loss',
      RECOVERY_CAP_MS,
    );
  }

  /** What reached console.error while `run` ran: ioredis and BullMQ print there every error nobody listens to. */
  async function consoleErrorsDuring(run: () => Promise<void>): Promise<string[]> {
    const original = console.error;
    const printed: string[] = [];
    console.error = (...args: unknown[]) => void printed.push(args.map(String).join(' ').slice(0, 200));
    try {
      await run();
    } finally {
      console.error = original;
    }
    return printed;
  }

  /** Every task succeeded as the client sees it, and its hold was captured once at the measured cost. */
  async function assertEachChargedOnce(account: TestAccount, ids: string[]): Promise<void> {
    for (const id of ids) {
      const task = await waitForTerminal(t, account, id, 60_000);
      assert.equal(task.status, 'succeeded', `${id}: ${task.failureReason}`);
      assert.equal(task.outputs.videos.length, 1);
      const hold = await holdOf(t, id);
      assert.deepEqual([hold.holds, hold.status, hold.captured], [1, 'settled', CHARGE], `${id}: one hold, settled at the measured cost`);
      const captures = await t.db.query(`SELECT 1 FROM ledger_entry l JOIN hold h ON h.id = l.hold_id WHERE h.subject_id = $1 AND l.kind = 'capture'`, [id]);
      assert.equal(captures.length, 1, `${id}: captured exactly once`);
    }
    const [ledger] = await t.db.query<{ balance: string; held: string; open_holds: string }>(
      `SELECT (SELECT sum(balance_delta_micros) FROM ledger_entry WHERE workspace_id = $1)::text AS balance,
              (SELECT sum(held_delta_micros) FROM ledger_entry WHERE workspace_id = $1)::text AS held,
              (SELECT count(*) FROM hold WHERE workspace_id = $1 AND status = 'open')::text AS open_holds`,
      [account.workspaceId],
    );
    const balance = usdToMicros(CREDIT_USD) - BigInt(ids.length) * CHARGE;
    assert.deepEqual(ledger, { balance: String(balance), held: '0', open_holds: '0' }, 'the ledger reproduces one charge per task');
    assert.deepEqual(await wallet(t, account), { balanceUsd: microsToUsd(balance), heldUsd: 0, availableUsd: microsToUsd(balance) });
  }

  it('after a flush: re-registers the schedulers within one interval, re-enqueues the tasks, each charged once', async () => {
    const account = await createAccount(t, { creditUsd: CREDIT_USD });
    const schedulers = await schedulerIds();
    assert.ok(schedulers.includes('periodic:reconcile-work'), `schedulers at boot: ${schedulers.join(', ')}`);
    const ids = await tasksInFlight(account, 'flush survivor');

    const printed = await consoleErrorsDuring(async () => {
      await t.flushRedis();
      const flushedAt = Date.now();
      assert.deepEqual(await schedulerIds(), [], 'the flush removed the schedulers');
      assert.deepEqual(await jobsPresent(ids), ids.map(() => false), 'the flush removed the task jobs');

      // Nothing is restarted: the running app must notice the loss on its own.
      await awaitRecovery(ids, schedulers, flushedAt, 'flush');
      await assertEachChargedOnce(account, ids);
      console.log(`[redis-flush-recovery] flush: all ${ids.length} tasks succeeded ${Date.now() - flushedAt} ms after the flush (generation delay ${GENERATION_DELAY_MS} ms)`);
    });
    assert.deepEqual(printed, [], 'errors of jobs lost mid-run go to the log, not to stderr');
  });

  it('after Redis was down and came back empty: recovers once it is reachable, each task charged once', async () => {
    const account = await createAccount(t, { creditUsd: CREDIT_USD });
    const schedulers = await schedulerIds();
    const ids = await tasksInFlight(account, 'outage survivor');

    const printed = await consoleErrorsDuring(async () => {
      await redisProxy.cut();
      await t.flushRedis(); // the restarted Redis has no data (the flush goes around the proxy)
      // Down for longer than an interval: checks and workers meet a dead connection meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2 * RECONCILE_INTERVAL_MS));
      await redisProxy.restore();
      const restoredAt = Date.now();

      await awaitRecovery(ids, schedulers, restoredAt, 'outage, then empty Redis');
      await assertEachChargedOnce(account, ids);
      console.log(`[redis-flush-recovery] outage: all ${ids.length} tasks succeeded ${Date.now() - restoredAt} ms after Redis was back`);
    });
    // Each connection's failed reconnects went to the log, at most once a minute each.
    assert.deepEqual(printed, [], 'no stack trace per reconnect attempt on stderr');
  });
});
