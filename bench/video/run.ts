// Video benchmark on the sandbox with zero latency (issue 3):
//   1. task creations per second (validate + hold + row + job) at 32 concurrent clients, API role only;
//   2. completed tasks per second through one worker process (720p, 3 s, real ffmpeg MP4s).
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:video (builds into dist/ first).
// Knobs: BENCH_CREATIONS (default 2000), BENCH_CLIENTS (32), BENCH_COMPLETIONS (48).
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';
import { waitForFinishedTasks } from '../support/completions.js';
import { describeMachine, drive, type DriveResult, percentile as pct, runBench } from '../support/drive.js';

const CREATIONS = Number(process.env.BENCH_CREATIONS ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const COMPLETIONS = Number(process.env.BENCH_COMPLETIONS ?? 48);
const BODY = { model: 'vendor-omni-1.1-flash-preview', prompt: 'benchmark clip', controls: { duration: 3, resolution: '720p' } };

/** `total` task creations over `clients` concurrent clients. */
function createMany(t: TestApp, key: string, total: number, clients: number): Promise<DriveResult> {
  return drive(total, clients, async () => {
    const t0 = performance.now();
    const response = await t.request('/v1/contents/generations/tasks', { method: 'POST', key, json: BODY });
    await response.arrayBuffer();
    return { ok: response.status === 200, ms: performance.now() - t0 };
  });
}

async function main(): Promise<void> {
  console.log(describeMachine());

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
      const failed = await waitForFinishedTasks(front.db, 'video_task', COMPLETIONS);
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `completions: ${COMPLETIONS} tasks (720p, 3 s, H.264+AAC) through one worker: ${(COMPLETIONS / seconds).toFixed(2)} tasks/s ` +
          `(${seconds.toFixed(1)} s incl. worker boot, ${failed} failed)`,
      );
    } finally {
      await worker.close();
    }
  } finally {
    await front.close();
  }
}

runBench(main);
