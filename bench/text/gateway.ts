// Our service for the text benchmark, in a process of its own (forked by run.ts, so its CPU and
// resident memory are its own). Boots exactly as production does (createApp), API role only, on a
// database of its own (dropped on stop) and a queue prefix of its own, with the LIVE Gemini adapter
// pointed at the fake upstream. Creates a workspace, a live key and enough credit for the run, then
// tells the parent {url, key, database} over IPC. On 'stop' (or SIGTERM) it closes and drops the database.
// Env: BENCH_GEMINI_URL (required), BENCH_LOG_LEVEL (warn), BENCH_CREDIT_USD (1000000),
// BENCH_ACCOUNTS (1: one workspace, one wallet row for every request).
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';

const upstream = process.env.BENCH_GEMINI_URL;
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

process.on('message', (message) => {
  if (message === 'stop') void stop();
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
      MEDIA_SIGNING_KEY: 'bench-media-signing-key-0123456789abcdef0123',
      SECRETS_ENCRYPTION_KEY: 'YmVuY2gtc2VjcmV0cy1rZXktMDEyMzQ1Njc4OWFiY2Q=',
      DATABASE_CREATE_IF_MISSING: 'false',
      GEMINI_API_KEY: 'fake-gemini-key',
      GEMINI_BASE_URL: upstream,
    },
  });
  // One workspace by default: every request holds and settles on the same wallet row (the worst case).
  const keys: string[] = [];
  for (let i = 0; i < Number(process.env.BENCH_ACCOUNTS ?? 1); i++) {
    const account = await createAccount(app, { creditUsd: Number(process.env.BENCH_CREDIT_USD ?? 1_000_000), name: `text benchmark ${i}` });
    keys.push(account.key);
  }
  process.send({ ready: true, url: app.baseUrl, key: keys[0], keys, database: app.db.name });
} catch (error) {
  console.error('gateway boot failed:', error);
  process.send({ ready: false, error: String(error) });
  await stop(1);
}
