import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Queues } from '../../src/queue/queues.js';
import { WorkReconciler } from '../../src/queue/work-reconciler.js';
import { eventually } from '../support/eventually.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { SAMPLE_JOB, SAMPLE_QUEUE, SAMPLE_UNIT_TABLE_SQL, SampleUnitService, SampleWorkModule, sampleJobId } from './sample-work.module.js';

interface UnitRow {
  id: string;
  status: string;
  attempts: number;
}

describe('work reconciler: PostgreSQL is the truth, Redis only moves work', () => {
  let db: TestDatabase;
  let t: TestApp;
  let queues: Queues;
  let reconciler: WorkReconciler;
  let units: SampleUnitService;

  before(async () => {
    // The unit table exists before boot, so the boot-time reconcile already sees the source.
    db = await createTestDatabase('reconciler');
    await db.query(SAMPLE_UNIT_TABLE_SQL);
    t = await bootTestApp({ label: 'reconciler', db, imports: [SampleWorkModule], env: { RECONCILE_INTERVAL_MS: '3600000' } });
    queues = t.app.get(Queues);
    reconciler = t.app.get(WorkReconciler);
    units = t.app.get(SampleUnitService);
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  const rows = (ids: string[]) => db.query<UnitRow>(`SELECT id, status, attempts FROM test_unit WHERE id = ANY($1::uuid[]) ORDER BY id`, [ids]);
  const jobCount = async () => {
    const counts = await queues.get(SAMPLE_QUEUE).getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };

  it('re-enqueues pending units under the same ids after a Redis flush, and they finish once', async () => {
    const queue = queues.get(SAMPLE_QUEUE);
    await queue.pause(); // Jobs wait, as if no worker had reached them before Redis lost them.
    const ids = Array.from({ length: 5 }, () => randomUUID()).sort();
    for (const id of ids) {
      await db.query(`INSERT INTO test_unit (id) VALUES ($1)`, [id]);
      await units.enqueue(id);
    }
    for (const id of ids) {
      const job = await queues.getJob(SAMPLE_QUEUE, sampleJobId(id));
      assert.ok(job, `job of ${id} enqueued`);
      assert.ok(['waiting', 'paused'].includes(await job.getState()));
    }
    // A duplicate enqueue while the job exists is a no-op.
    await units.enqueue(ids[0]!);
    assert.equal(await jobCount(), ids.length);

    await t.flushRedis();
    for (const id of ids) assert.equal(await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)), undefined, 'the flush removed the job');
    assert.deepEqual((await rows(ids)).map((r) => [r.status, r.attempts]), ids.map(() => ['pending', 0]), 'nothing ran before the flush');

    // The flush also unpaused the queue: reconciled jobs run at once.
    const report = await reconciler.reconcile();
    assert.deepEqual(report, { checked: ids.length, enqueued: ids.length });
    for (const id of ids) {
      const job = await queues.getJob(SAMPLE_QUEUE, sampleJobId(id));
      assert.ok(job, `job of ${id} re-created`);
      assert.equal(job.name, SAMPLE_JOB);
      assert.deepEqual(job.data, { unitId: id });
    }
    // Whatever the workers have done meanwhile, nothing is missing, so nothing is enqueued.
    assert.equal((await reconciler.reconcile()).enqueued, 0);

    const finished = await eventually(() => rows(ids), (r) => r.every((u) => u.status === 'done'), 'all units done');
    assert.deepEqual(finished.map((r) => r.attempts), ids.map(() => 1), 'each unit ran exactly once');
    assert.deepEqual(await reconciler.reconcile(), { checked: 0, enqueued: 0 });

    // Enqueueing finished work again is a no-op too: the completed job keeps the id.
    for (const id of ids) await units.enqueue(id);
    for (const id of ids) assert.equal(await (await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)))!.getState(), 'completed');
    assert.equal((await queue.getJobCounts('waiting')).waiting, 0);
    assert.deepEqual((await rows(ids)).map((r) => r.attempts), ids.map(() => 1));
  });

  it('re-enqueues a unit whose job failed while its row stayed pending', async () => {
    const id = randomUUID();
    await db.query(`INSERT INTO test_unit (id, fail_first) VALUES ($1, true)`, [id]);
    await units.enqueue(id);
    const failed = await eventually(
      async () => (await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)))?.getState(),
      (state) => state === 'failed',
      'the first run failing',
    );
    assert.equal(failed, 'failed');
    assert.deepEqual((await rows([id])).map((r) => [r.status, r.attempts]), [['pending', 1]]);

    const report = await reconciler.reconcile();
    assert.deepEqual(report, { checked: 1, enqueued: 1 });
    const [done] = await eventually(() => rows([id]), (r) => r[0]?.status === 'done', 'the unit finishing on its second run');
    assert.equal(done!.attempts, 2);
  });

  it('does not run a unit again when it finished after the pending list was read', async () => {
    const id = randomUUID();
    await db.query(`INSERT INTO test_unit (id) VALUES ($1)`, [id]);
    await units.enqueue(id);
    await eventually(() => rows([id]), (r) => r[0]?.status === 'done', 'the unit finishing');
    // A source whose first read is stale, as when the job completes between the read and the
    // job lookup: it still lists the finished unit as pending.
    let reads = 0;
    reconciler.register({
      name: 'stale-snapshot',
      findPending: async () => (reads++ === 0 ? [{ queue: SAMPLE_QUEUE, jobName: SAMPLE_JOB, jobId: sampleJobId(id), data: { unitId: id } as never }] : []),
    });
    const report = await reconciler.reconcile();
    assert.equal(report.enqueued, 0);
    assert.equal(reads, 2, 'a unit whose job had finished was read again before re-enqueueing');
    assert.equal(await (await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)))!.getState(), 'completed');
    assert.deepEqual((await rows([id])).map((r) => [r.status, r.attempts]), [['done', 1]]);
  });

  it('accepts job ids of the <kind>:<id> form with any number of parts', async () => {
    // BullMQ refuses custom ids with one ':' (or three); Queues stores them in a safe form.
    for (const jobId of [`one:${randomUUID()}`, `a:b:${randomUUID()}`, `a:b:c:${randomUUID()}`, 'no-colon']) {
      await queues.add(SAMPLE_QUEUE, SAMPLE_JOB, { unitId: randomUUID() } as never, jobId, { delay: 3_600_000 });
      const job = await queues.getJob(SAMPLE_QUEUE, jobId);
      assert.ok(job, jobId);
      assert.equal(await job.getState(), 'delayed');
      await job.remove();
    }
  });
});
