// Our service for the text benchmark, in a process of its own (forked by run.ts, so its CPU and
// resident memory are its own). Boots exactly as production does (createApp, which also applies
// HEAP_GROWING_PERCENT, so no node flag is needed for that), API role only, on a
// database of its own (dropped on stop) and a queue prefix of its own, with the LIVE Gemini adapter
// pointed at the fake upstream. Creates a workspace, a live key and enough credit for the run, then
// tells the parent {url, key, database} over IPC. On 'stop' (or SIGTERM) it closes and drops the database.
// Env: BENCH_GEMINI_URL (required), BENCH_LOG_LEVEL (warn), BENCH_CREDIT_USD (1000000),
// BENCH_ACCOUNTS (1: one workspace, one wallet row for every request), BENCH_AUDIO_KEYS (1),
// HEAP_GROWING_PERCENT (the default unless set). On {profile: 'start'} it starts V8's CPU profiler
// (the inspector, in this process), on {profile: 'stop', file} it writes the profile to that file
// and answers {profiled: file}: run.ts profiles each measured load so (BENCH_CPU_PROF=1). For the
// task creation loads (video, audio) it also makes one test-mode workspace and key: `svc_test_`
// keys run on the sandbox in every environment, so creations need no upstream.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createAccount, issueKey } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';

const upstream = process.env.BENCH_GEMINI_URL;
const audioKeyCount = Number(process.env.BENCH_AUDIO_KEYS ?? 1);
if (!upstream || !process.send) {
  console.error('gateway.ts is started by bench/text/run.ts (fork, BENCH_GEMINI_URL)');
  process.exit(2);
}

let app: TestApp | null = null;
let stopping = false;

async function stop(code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await app?.flushRedis();
    await app?.close(); // closes the app, drops the database and the media folder
  } finally {
    process.exit(code);
  }
}

/** The CPU profiler of this process, while run.ts profiles a load. */
let profiler: Session | null = null;

async function profile(message: { profile: 'start' } | { profile: 'stop'; file: string }): Promise<void> {
  if (message.profile === 'start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
    process.send!({ profiling: true });
    return;
  }
  const { profile: taken } = await profiler!.post('Profiler.stop');
  profiler!.disconnect();
  profiler = null;
  writeFileSync(message.file, JSON.stringify(taken));
  process.send!({ profiled: message.file });
}

process.on('message', (message: unknown) => {
  if (message === 'stop') void stop();
  else if (typeof message === 'object' && message !== null && 'profile' in message) void profile(message as Parameters<typeof profile>[0]);
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop()); // the parent died: clean up anyway

try {
  app = await bootTestApp({
    label: 'benchtext',
    env: {
      NODE_ENV: 'production',
      APP_ROLE: 'api',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      // Production refuses typed or patterned keys (src/config/secret-strength.ts): fresh random ones.
      MEDIA_SIGNING_KEY: randomBytes(32).toString('base64'),
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATABASE_CREATE_IF_MISSING: 'false',
      GEMINI_API_KEY: 'fake-gemini-key',
      GEMINI_BASE_URL: upstream,
      // Creations are measured without a worker: nothing drains the pending audio tasks. With one
      // key the limit is lifted (each batch then counts every pending task of that key); with
      // BENCH_AUDIO_KEYS > 1 the default limit stays and the creations rotate over that many keys.
      ...(audioKeyCount > 1 ? {} : { AUDIO_MAX_PENDING_PER_KEY: '100000000' }),
      // 0: no key cache (every request reads PostgreSQL), to compare with the default.
      ...(process.env.API_KEY_CACHE_TTL_MS ? { API_KEY_CACHE_TTL_MS: process.env.API_KEY_CACHE_TTL_MS } : {}),
      // Another percent (0: V8's own growing factor), to compare peak RSS and CPU; unset: the default.
      ...(process.env.HEAP_GROWING_PERCENT ? { HEAP_GROWING_PERCENT: process.env.HEAP_GROWING_PERCENT } : {}),
    },
  });
  // One workspace by default: every request holds and settles on the same wallet row (the worst case).
  const keys: string[] = [];
  for (let i = 0; i < Number(process.env.BENCH_ACCOUNTS ?? 1); i++) {
    const account = await createAccount(app, { creditUsd: Number(process.env.BENCH_CREDIT_USD ?? 1_000_000), name: `text benchmark ${i}` });
    keys.push(account.key);
  }
  const tasks = await createAccount(app, { creditUsd: Number(process.env.BENCH_CREDIT_USD ?? 1_000_000), environment: 'test', name: 'creation benchmark' });
  const audioKeys = [tasks.key];
  for (let i = 1; i < audioKeyCount; i++) audioKeys.push((await issueKey(app, tasks.workspaceId, 'test')).key);
  process.send({ ready: true, url: app.baseUrl, key: keys[0], keys, testKey: tasks.key, audioKeys, database: app.db.name });
} catch (error) {
  console.error('gateway boot failed:', error);
  process.send({ ready: false, error: String(error) });
  await stop(1);
}
