import { Queue } from 'bullmq';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { bullJobId } from '../../src/queue/queues.js';
import { RegisteredQueues } from '../../src/queue/registered-queues.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { metricSample as sample } from '../support/prometheus.js';
import { bootTestApp, deleteQueueKeys, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';
import { SAMPLE_OWNED_TABLE_SQL, SampleOwnedModule } from './sample-owned.module.js';
import { SAMPLE_QUEUE, SAMPLE_UNIT_TABLE_SQL, sampleJobId } from './sample-work.module.js';


interface Fixture {
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  firstLine: Promise<string>;
  lines(): string[];
  stderr(): string;
}

/** Runs graceful-shutdown.fixture.js in its own process (see there for the modes). */
function startFixture(mode: 'close' | 'sigterm', env: Record<string, string> = {}): Fixture {
  const script = fileURLToPath(new URL('./graceful-shutdown.fixture.js', import.meta.url));
  const child = spawn(process.execPath, ['--enable-source-maps', script, mode], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let gotLine: (line: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => (gotLine = resolve));
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('\n')) gotLine(stdout.split('\n')[0]!);
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Not a timing assertion: a child that never exits is the failure; the guard only ends the wait.
  const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      gotLine('');
      resolve({ code, signal: signal === 'SIGKILL' ? 'SIGKILL' : signal });
    }),
  );
  return { process: child, exited, firstLine, lines: () => stdout.trim().split('\n'), stderr: () => stderr };
}

describe('operations: health, metrics, OpenAPI, shutdown', () => {
  let t: TestApp;
  /** Every route Fastify registered, seen through an onRoute hook installed before listen. */
  const routes: Array<{ method: string; url: string }> = [];

  before(async () => {
    t = await bootTestApp({
      label: 'operations',
      imports: [SampleOwnedModule],
      beforeListen: (app) => {
        app.getHttpAdapter().getInstance().addHook('onRoute', (route) => {
          for (const method of [route.method].flat()) routes.push({ method, url: route.url });
        });
      },
    });
    await t.db.query(SAMPLE_OWNED_TABLE_SQL);
  });
  after(async () => {
    await t.close();
  });

  it('answers /health/live and /health/ready (PostgreSQL and Redis up) without a key', async () => {
    const live = await t.request('/health/live');
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'ok' });

    const ready = await t.request('/health/ready');
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { status: string; info: Record<string, { status: string }>; error: object };
    assert.equal(body.status, 'ok');
    assert.deepEqual(Object.keys(body.info).sort(), ['postgres', 'redis']);
    assert.equal(body.info.postgres?.status, 'up');
    assert.equal(body.info.redis?.status, 'up');
    assert.deepEqual(body.error, {});
  });

  it('exposes HTTP, queue and wallet metrics at /metrics, with values that match reality', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const wallet = t.app.get(WalletService);
    const hold = () =>
      wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: 250_000n, subjectType: 'ops', subjectId: 'm' });
    const holds = [await hold(), await hold()];
    await wallet.release(holds[0]!);
    for (let i = 0; i < 3; i++) assert.equal((await t.request('/health/live')).status, 200);

    const response = await t.request('/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await response.text();
    for (const name of ['svc_http_requests_total', 'svc_http_request_duration_seconds', 'svc_queue_jobs', 'svc_wallet_open_holds', 'svc_api_key_lookups_total']) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    // The counters count: three /health/live answers at least (earlier tests add more).
    const liveCount = sample(text, 'svc_http_requests_total', '{method="GET",route="/health/live",status="200"}');
    assert.ok(liveCount !== undefined && liveCount >= 3, `svc_http_requests_total for /health/live is ${liveCount}`);
    const liveObserved = sample(text, 'svc_http_request_duration_seconds_count', '{method="GET",route="/health/live",status="200"}');
    assert.equal(liveObserved, liveCount);
    // Unknown paths share one label instead of one series per path.
    await t.request('/no/such/path/12345');
    const after = await (await t.request('/metrics')).text();
    assert.ok(!after.includes('/no/such/path/12345'), 'a raw unknown path became a label');

    const [{ open }] = await t.db.query<{ open: string }>(`SELECT count(*) AS open FROM hold WHERE status = 'open'`);
    assert.equal(Number(open), 1);
    assert.equal(sample(text, 'svc_wallet_open_holds'), 1);
    assert.equal(sample(text, 'svc_wallet_held_usd'), 0.25);
    // Every queue a module registered (QueueModule.forFeature), the platform's and video's at least.
    const queues = t.app.get(RegisteredQueues).list();
    for (const queue of ['maintenance', 'video']) assert.ok(queues.includes(queue), `${queue} registered`);
    for (const queue of queues) {
      assert.notEqual(sample(text, 'svc_queue_jobs', `{queue="${queue}",state="waiting"}`), undefined, `svc_queue_jobs for ${queue}`);
    }
  });

  it('documents every registered route in /docs/json', async () => {
    const response = await t.request('/docs/json');
    assert.equal(response.status, 200);
    const doc = (await response.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.match(doc.openapi, /^3\./);

    // `/x/:id` and `/x/{id}` are the same path; so are a trailing `*` and a trailing `{…}`.
    const normal = (path: string) => path.replace(/:[A-Za-z0-9_]+/g, '{}').replace(/\{[^}]*\}/g, '{}').replace(/\*$/, '{}');
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${normal(path)}`);
    }
    const registered = routes.filter((r) => !r.url.startsWith('/docs'));
    const urlsWithGet = new Set(registered.filter((r) => r.method === 'GET').map((r) => r.url));
    // Fastify adds a HEAD beside every GET by itself; a HEAD-only route must be documented.
    const expected = registered.filter((r) => r.method !== 'HEAD' || !urlsWithGet.has(r.url)).map((r) => `${r.method} ${normal(r.url)}`);

    assert.ok(expected.length >= 10, `only ${expected.length} routes seen: is the onRoute hook working?`);
    for (const must of ['GET /health/live', 'GET /health/ready', 'GET /metrics', 'GET /api/svc/v1/wallet', 'POST /api/svc/v1/test-owned', 'GET /api/svc/v1/test-owned/{}']) {
      assert.ok(expected.includes(must), `route ${must} was not registered`);
    }
    const undocumented = expected.filter((route) => !documented.has(route));
    assert.deepEqual(undocumented, [], 'routes missing from /docs/json');
    // And nothing documented that does not exist.
    const registeredSet = new Set(registered.map((r) => `${r.method} ${normal(r.url)}`));
    assert.deepEqual([...documented].filter((d) => !registeredSet.has(d)), [], 'documented routes that are not registered');

    const ui = await t.request('/docs');
    assert.equal(ui.status, 200);
    assert.match(ui.headers.get('content-type') ?? '', /text\/html/);
  });

  it('closes BullMQ workers on app.close(), leaving nothing that keeps the process alive', async () => {
    const child = startFixture('close');
    const { code, signal } = await child.exited;

    assert.equal(signal, null, `the process did not exit by itself after app.close(); stderr: ${child.stderr()}`);
    assert.equal(code, 0, `exit code ${code}; stderr: ${child.stderr()}`);
    assert.ok(!child.stderr().includes('still open after close'), child.stderr());
    const report = JSON.parse(child.lines().at(-1)!) as { unitStatus: string; runningBefore: boolean[]; runningAfter: boolean[]; closingAfter: boolean[] };
    assert.equal(report.unitStatus, 'done', 'the worker processed a job before shutdown');
    assert.deepEqual(report.runningBefore, [true, true]);
    assert.deepEqual(report.runningAfter, [false, false]);
    assert.deepEqual(report.closingAfter, [true, true]);
  });

  it('on SIGTERM, lets the running job finish (row and job complete) and then exits', async () => {
    const db = await createTestDatabase('sigterm');
    let queue: Queue | undefined;
    let prefix: string | undefined;
    try {
      await db.query(SAMPLE_UNIT_TABLE_SQL);
      const unitId = randomUUID();
      await db.query(`INSERT INTO test_unit (id, delay_ms) VALUES ($1, 1500)`, [unitId]);
      const child = startFixture('sigterm', { FIXTURE_DB_URL: db.url, FIXTURE_UNIT_ID: unitId });
      const { queuePrefix } = JSON.parse(await child.firstLine) as { queuePrefix: string };
      prefix = queuePrefix;
      // SIGTERM while the job is running: it has started (attempts = 1) and is not done.
      await eventually(
        async () => (await db.query<{ attempts: number }>(`SELECT attempts FROM test_unit WHERE id = $1`, [unitId]))[0]?.attempts,
        (attempts) => attempts === 1,
        'the slow job starting',
      );
      child.process.kill('SIGTERM');
      const { code, signal } = await child.exited;

      assert.ok(signal === 'SIGTERM' || code === 0, `ended with code ${code}, signal ${signal}; stderr: ${child.stderr()}`);
      const [row] = await db.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM test_unit WHERE id = $1`, [unitId]);
      assert.deepEqual(row, { status: 'done', attempts: 1 }, `the job was cut off; stderr: ${child.stderr()}`);
      queue = new Queue(SAMPLE_QUEUE, { connection: { url: TEST_REDIS_URL }, prefix: queuePrefix });
      const job = await queue.getJob(bullJobId(sampleJobId(unitId)));
      assert.equal(await job?.getState(), 'completed', 'the job was marked completed before the worker closed');
      assert.deepEqual(await queue.getWorkers(), [], 'no worker left registered');
      await queue.obliterate({ force: true });
    } finally {
      await queue?.close();
      // The child was stopped by SIGTERM: the keys of its other queues (periodic tasks) are ours to remove.
      if (prefix) await deleteQueueKeys(prefix);
      await db.drop();
    }
  });
});
