// Video benchmark on the sandbox with zero latency (issue 3):
//   1. task creations per second (validate + hold + row + job) at 32 concurrent clients, API role only;
//   2. completed tasks per second through one worker process (720p, 3 s, real ffmpeg MP4s).
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:video (builds into dist/ first).
// Knobs: BENCH_CREATIONS (default 2000), BENCH_CLIENTS (32), BENCH_COMPLETIONS (48).
import { cpus } from 'node:os';
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';

const CREATIONS = Number(process.env.BENCH_CREATIONS ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const COMPLETIONS = Number(process.env.BENCH_COMPLETIONS ?? 48);
const BODY = { model: 'vendor-omni-1.1-flash-preview', prompt: 'benchmark clip', controls: { duration: 3, resolution: '720p' } };

async function createMany(t: TestApp, key: string, total: number, clients: number): Promise<{ seconds: number; failures: number; latencies: number[] }> {
  let next = 0;
  let failures = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        const t0 = performance.now();
        const response = await t.request('/v1/contents/generations/tasks', { method: 'POST', key, json: BODY });
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (response.status !== 200) failures++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures, latencies };
}

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'})`);

  // 1. Creations: API role only, so no worker competes for the CPU.
  const api = await bootTestApp({ label: 'benchvideo', env: { APP_ROLE: 'api', LOG_LEVEL: 'silent' } });
  try {
    const account = await createAccount(api, { creditUsd: 1_000_000 });
    await createMany(api, account.key, 200, CLIENTS); // warm-up
    const run = await createMany(api, account.key, CREATIONS, CLIENTS);
    console.log(
      `creations: ${CREATIONS} tasks, ${CLIENTS} concurrent clients: ${(CREATIONS / run.seconds).toFixed(0)} tasks/s ` +
        `(p50 ${pct(run.latencies, 50).toFixed(1)} ms, p99 ${pct(run.latencies, 99).toFixed(1)} ms, ${run.failures} failures)`,
    );
  } finally {
    await api.close();
  }

  // 2. Completions: tasks are created first, then one worker process drains them.
  const front = await bootTestApp({ label: 'benchvideo2', env: { APP_ROLE: 'api', LOG_LEVEL: 'silent' } });
  try {
    const account = await createAccount(front, { creditUsd: 1_000_000 });
    await createMany(front, account.key, COMPLETIONS, CLIENTS);
    const started = performance.now();
    const worker = await bootTestApp({ label: 'benchvideow', db: front.db, env: { APP_ROLE: 'worker', QUEUE_PREFIX: front.queuePrefix, MEDIA_DIR: front.mediaDir } });
    try {
      for (;;) {
        const [row] = await front.db.query<{ done: string; failed: string }>(
          `SELECT count(*) FILTER (WHERE status = 'succeeded') AS done, count(*) FILTER (WHERE status = 'failed') AS failed FROM video_task`,
        );
        if (Number(row!.done) + Number(row!.failed) >= COMPLETIONS) {
          const seconds = (performance.now() - started) / 1000;
          console.log(
            `completions: ${COMPLETIONS} tasks (720p, 3 s, H.264+AAC) through one worker: ${(COMPLETIONS / seconds).toFixed(2)} tasks/s ` +
              `(${seconds.toFixed(1)} s incl. worker boot, ${row!.failed} failed)`,
          );
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await worker.close();
    }
  } finally {
    await front.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
