/**
 * TEST-ONLY child process for operations.test.ts; it never calls process.exit(), so the parent
 * can assert that it ends by itself.
 * - `close`: boots the whole app (API and workers), runs one job, calls app.close(), reports.
 * - `sigterm`: boots on the parent's database (FIXTURE_DB_URL), enqueues the slow unit
 *   FIXTURE_UNIT_ID, prints its queue prefix and waits for the parent's SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { MaintenanceProcessor } from '../../src/queue/maintenance.processor.js';
import { eventually } from '../support/eventually.js';
import { bootTestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { SAMPLE_UNIT_TABLE_SQL, SampleUnitProcessor, SampleUnitService, SampleWorkModule } from './sample-work.module.js';

const mode = process.argv[2];

if (mode === 'sigterm') {
  const url = process.env.FIXTURE_DB_URL!;
  const parentDb: TestDatabase = {
    name: new URL(url).pathname.slice(1),
    url,
    query: () => Promise.reject(new Error('the parent owns this database')),
    drop: () => Promise.resolve(),
  };
  const t = await bootTestApp({ label: 'sigterm', db: parentDb, imports: [SampleWorkModule] });
  await t.app.get(SampleUnitService).enqueue(process.env.FIXTURE_UNIT_ID!);
  process.stdout.write(`${JSON.stringify({ ready: true, queuePrefix: t.queuePrefix })}\n`);
} else {
  const db = await createTestDatabase('shutdown');
  await db.query(SAMPLE_UNIT_TABLE_SQL);
  const t = await bootTestApp({ label: 'shutdown', db, imports: [SampleWorkModule] });
  const workers = [t.app.get(MaintenanceProcessor).worker, t.app.get(SampleUnitProcessor).worker];
  const runningBefore = workers.map((w) => w.isRunning());

  // One unit through the queue, so the worker has really been busy.
  const unitId = randomUUID();
  await db.query(`INSERT INTO test_unit (id) VALUES ($1)`, [unitId]);
  await t.app.get(SampleUnitService).enqueue(unitId);
  const status = await eventually(
    async () => (await db.query<{ status: string }>(`SELECT status FROM test_unit WHERE id = $1`, [unitId]))[0]!.status,
    (s) => s === 'done',
    'the unit finishing',
  );

  const closing = performance.now();
  await t.close();
  const closeMs = Math.round(performance.now() - closing);
  await db.drop();
  const report = {
    unitStatus: status,
    runningBefore,
    runningAfter: workers.map((w) => w.isRunning()),
    closingAfter: workers.map((w) => w.closing !== undefined),
    closeMs,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  // Anything still open here keeps the process alive; list it for whoever reads a failure.
  setImmediate(() => {
    // Our own stdout/stderr (a TTY or the parent's pipes) are not leaks.
    const left = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap');
    if (left.length > 0) process.stderr.write(`still open after close: ${left.join(', ')}\n`);
  });
}
