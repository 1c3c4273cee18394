import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Queues } from '../../src/queue/queues.js';
import { WorkReconciler } from '../../src/queue/work-reconciler.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { SAMPLE_JOB, SAMPLE_QUEUE, SAMPLE_UNIT_TABLE_SQL, SampleWorkModule, sampleJobId } from './sample-work.module.js';

interface ErrorBody {
  error: { code: string; message: string };
}

/**
 * A domain that no core file knows of (test/platform/sample-work.module.ts) brings its queue, its
 * typed job, its reconciler source and its error prefix through registrations alone
 * (docs/extending.md › Add a domain).
 */
describe('domain registrations: queue, job, reconciler source and error prefix from the domain folder', () => {
  let db: TestDatabase;
  let t: TestApp;
  let queues: Queues;
  let key: string;

  const unitRow = async (id: string) => (await db.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM test_unit WHERE id = $1`, [id]))[0];
  const createUnit = async (): Promise<string> => {
    const response = await t.request('/test-units', { method: 'POST', key });
    assert.equal(response.status, 201);
    return ((await response.json()) as { id: string }).id;
  };

  before(async () => {
    db = await createTestDatabase('registrations');
    await db.query(SAMPLE_UNIT_TABLE_SQL);
    t = await bootTestApp({ label: 'registrations', db, imports: [SampleWorkModule], env: { RECONCILE_INTERVAL_MS: '3600000' } });
    queues = t.app.get(Queues);
    key = (await createAccount(t, { creditUsd: 1 })).key;
  });
  after(async () => {
    await t.close();
    await db.drop();
  });

  it('runs the job enqueued on its own queue, with its typed payload, under its deterministic id', async () => {
    const id = await createUnit();
    const job = await queues.getJob(SAMPLE_QUEUE, sampleJobId(id));
    assert.ok(job, 'the job is on the domain queue');
    assert.equal(job.name, SAMPLE_JOB);
    assert.deepEqual(job.data, { unitId: id });
    const done = await eventually(() => unitRow(id), (row) => row?.status === 'done', 'the unit finishing');
    assert.equal(done?.attempts, 1);
    const answer = await t.request(`/test-units/${id}`);
    assert.deepEqual(await answer.json(), { id, status: 'done' });
  });

  it('has its pending unit enqueued again by the reconciler after a Redis flush', async () => {
    await queues.get(SAMPLE_QUEUE).pause(); // The job waits, as if no worker had reached it.
    const id = await createUnit();
    assert.ok(await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)));
    await t.flushRedis(); // Also unpauses the queue.
    assert.equal(await queues.getJob(SAMPLE_QUEUE, sampleJobId(id)), undefined, 'the flush removed the job');

    const report = await t.app.get(WorkReconciler).reconcile();
    assert.equal(report.enqueued, 1);
    const again = await queues.getJob(SAMPLE_QUEUE, sampleJobId(id));
    assert.deepEqual(again?.data, { unitId: id });
    const done = await eventually(() => unitRow(id), (row) => row?.status === 'done', 'the reconciled unit finishing');
    assert.equal(done?.attempts, 1, 'the unit ran once, after the flush');
  });

  it('appears in the svc_queue_jobs gauge', async () => {
    await queues.get(SAMPLE_QUEUE).pause();
    const ids = [await createUnit(), await createUnit()];
    const text = await (await t.request('/metrics')).text();
    assert.equal(metricSample(text, 'svc_queue_jobs', `{queue="${SAMPLE_QUEUE}",state="waiting"}`), ids.length);
    assert.notEqual(metricSample(text, 'svc_queue_jobs', '{queue="video",state="waiting"}'), undefined, 'the built-in queues are still listed');
    await queues.get(SAMPLE_QUEUE).resume();
    for (const id of ids) await eventually(() => unitRow(id), (row) => row?.status === 'done', 'the unit finishing');
  });

  it('answers errors on its paths with its prefix, those raised before its handler too', async () => {
    const cases: Array<[string, () => Promise<Response>, number, string]> = [
      ['its own refusal (relative not_found)', () => t.request(`/test-units/${randomUUID()}`), 404, 'sample.not_found'],
      ['a pipe refusing the id', () => t.request('/test-units/not-a-uuid'), 400, 'sample.invalid_field'],
      ['the key guard, before the handler', () => t.request('/test-units', { method: 'POST' }), 401, 'sample.unauthorized'],
    ];
    const unitCount = async () => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM test_unit`))[0]!.n);
    const unitsBefore = await unitCount();
    for (const [what, send, status, code] of cases) {
      const response = await send();
      assert.equal(response.status, status, what);
      assert.equal(((await response.json()) as ErrorBody).error.code, code, what);
    }
    assert.equal(await unitCount(), unitsBefore, 'a refused request creates nothing');
  });
});
