/**
 * Attacked: Redis losing every queue key while video tasks are mid-flight — a FLUSHDB, or a
 * restart without persistence — with no process restarted afterwards.
 * How: the app boots with a 2 s reconcile interval; several sandbox video tasks are held in
 * `generating` by `[sandbox:delay=…]` (their jobs wait in the delayed set). Then every Redis key
 * of this app is deleted (`flushRedis()`: only this app's queue prefix, never FLUSHDB, since
 * other suites share this Redis). The job schedulers (reconciler, sweeps) went with the keys;
 * they used to be registered only at worker boot, so the tasks stayed stuck until a restart.
 * Asserted: the schedulers and every task's job are back within one reconcile interval (the
 * time taken is printed), the maintenance worker runs periodic work again, every task ends
 * `succeeded` through the API, and each hold was captured exactly once with the wallet right.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { microsToUsd, usdToMicros } from '../../libs/common/index.js';
import { videoCost } from '../../src/modules/billing/price-catalogue.js';
import { videoJobId } from '../../src/modules/video/video-task.service.js';
import { QueueName } from '../../src/queue/queue-names.js';
import { Queues } from '../../src/queue/queues.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, holdOf, waitForTerminal, wallet } from '../video/support/video-helpers.js';

const RECONCILE_INTERVAL_MS = 2000;
const CREDIT_USD = 20;
const TASKS = 4;
/** Long enough that every task is still generating when Redis is flushed. */
const GENERATION_DELAY_MS = 5000;
/** The bound on waiting for recovery: far above the promise, so only a real loss fails. */
const RECOVERY_CAP_MS = 15 * RECONCILE_INTERVAL_MS;

describe('Redis flush with video tasks in flight: recovery without a restart', () => {
  let t: TestApp;
  let account: TestAccount;
  let queues: Queues;

  before(async () => {
    t = await bootTestApp({ label: 'redisflush', env: { RECONCILE_INTERVAL_MS: String(RECONCILE_INTERVAL_MS) } });
    account = await createAccount(t, { creditUsd: CREDIT_USD });
    queues = t.app.get(Queues);
  });
  after(async () => {
    await t.close();
  });

  const schedulerIds = async () => (await queues.get(QueueName.Maintenance).getJobSchedulers()).map((s) => s.key).sort();
  const jobsPresent = async (ids: string[]) =>
    Promise.all(ids.map(async (id) => (await queues.getJob(QueueName.Video, videoJobId(id))) !== undefined));
  const phases = async (ids: string[]) =>
    (await t.db.query<{ phase: string | null }>(`SELECT phase FROM video_task WHERE id = ANY($1) ORDER BY id`, [ids])).map((r) => r.phase);

  it('re-registers the schedulers, re-enqueues the tasks, and every task is charged once', async () => {
    const registered = await schedulerIds();
    assert.ok(registered.includes('periodic:reconcile-work'), `schedulers at boot: ${registered.join(', ')}`);

    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const created = await createTask(t, account, {
        model: 'vendor-omni-flash-preview',
        prompt: `flush survivor ${i} [sandbox:delay=${GENERATION_DELAY_MS}]`,
        controls: { duration: 3 },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      ids.push(created.body.id as string);
    }
    await eventually(() => phases(ids), (p) => p.every((phase) => phase === 'generating'), 'every task generating', 30_000);

    await t.flushRedis();
    const flushedAt = Date.now();
    assert.deepEqual(await schedulerIds(), [], 'the flush removed the schedulers');
    assert.deepEqual(await jobsPresent(ids), ids.map(() => false), 'the flush removed the task jobs');

    // Nothing is restarted: the running app must notice the loss on its own.
    await eventually(
      async () => ({ schedulers: await schedulerIds(), jobs: await jobsPresent(ids) }),
      (seen) => seen.schedulers.join() === registered.join() && seen.jobs.every(Boolean),
      'schedulers and task jobs back after the flush',
      RECOVERY_CAP_MS,
    );
    const recoveredMs = Date.now() - flushedAt;
    console.log(`[redis-flush-recovery] schedulers and ${TASKS} task jobs back ${recoveredMs} ms after the flush (reconcile interval ${RECONCILE_INTERVAL_MS} ms)`);

    // The maintenance worker survived the flush too: a periodic job finishes after it.
    const maintenance = queues.get(QueueName.Maintenance);
    await eventually(
      async () => (await maintenance.getJobs(['completed'])).some((job) => (job.finishedOn ?? 0) > flushedAt),
      Boolean,
      'a periodic job completing after the flush',
      RECOVERY_CAP_MS,
    );

    const expectedCharge = videoCost('vendor-omni-flash-preview', '720p', 3);
    for (const id of ids) {
      const task = await waitForTerminal(t, account, id, 60_000);
      assert.equal(task.status, 'succeeded', `${id}: ${task.failureReason}`);
      assert.equal(task.outputs.videos.length, 1);
      const hold = await holdOf(t, id);
      assert.deepEqual([hold.holds, hold.status, hold.captured], [1, 'settled', expectedCharge], `${id}: one hold, settled at the measured cost`);
      const captures = await t.db.query(`SELECT 1 FROM ledger_entry l JOIN hold h ON h.id = l.hold_id WHERE h.subject_id = $1 AND l.kind = 'capture'`, [id]);
      assert.equal(captures.length, 1, `${id}: captured exactly once`);
    }

    const [ledger] = await t.db.query<{ balance: string; held: string; open_holds: string }>(
      `SELECT (SELECT sum(balance_delta_micros) FROM ledger_entry WHERE workspace_id = $1)::text AS balance,
              (SELECT sum(held_delta_micros) FROM ledger_entry WHERE workspace_id = $1)::text AS held,
              (SELECT count(*) FROM hold WHERE workspace_id = $1 AND status = 'open')::text AS open_holds`,
      [account.workspaceId],
    );
    const expectedBalance = usdToMicros(CREDIT_USD) - BigInt(TASKS) * expectedCharge;
    assert.deepEqual(ledger, { balance: String(expectedBalance), held: '0', open_holds: '0' }, 'the ledger reproduces one charge per task');
    assert.deepEqual(await wallet(t, account), { balanceUsd: microsToUsd(expectedBalance), heldUsd: 0, availableUsd: microsToUsd(expectedBalance) });
  });
});
