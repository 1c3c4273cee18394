import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from './test-app.js';

const here = dirname(fileURLToPath(import.meta.url));

/** What an API child reports of its key cache (test/support/api-child.ts). */
export interface ChildKeyCacheState {
  subscribed: boolean;
  entries: number;
  subscriptions: number;
  losses: number;
  received: number;
  hit: number;
  miss: number;
  bypass: number;
}

/** An API process of its own on `api`'s database, Redis prefix and media folder. */
export interface ApiChild {
  baseUrl: string;
  process: ChildProcess;
  request(path: string, init?: { method?: string; key?: string; admin?: boolean }): Promise<Response>;
  keyCache(): Promise<ChildKeyCacheState>;
  stop(): Promise<void>;
}

/**
 * Starts an API-only process (APP_ROLE=api) sharing `api`'s database and Redis prefix; `env`
 * adds to or overrides the shared environment (REDIS_URL through a proxy). Resolves once it
 * listens. `stop` ends it with SIGTERM (a clean close; SIGKILL if that hangs).
 */
export async function startApiChild(api: TestApp, env: Record<string, string> = {}): Promise<ApiChild> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const childEnv = {
    NODE_ENV: 'test',
    DATABASE_URL: api.db.url,
    DATABASE_CREATE_IF_MISSING: 'false',
    DATABASE_RUN_MIGRATIONS: 'false',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: api.queuePrefix,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    MEDIA_DIR: api.mediaDir,
    PUBLIC_BASE_URL: baseUrl,
    PORT: String(port),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DEMO_SEED: 'false',
    ...env,
  };
  const child = fork(join(here, 'api-child.js'), [], { env: { ...process.env, SVC_CHILD_ENV: JSON.stringify(childEnv) }, stdio: 'inherit' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`API child exited early (${code})`)));
  });

  let nextId = 0;
  return {
    baseUrl,
    process: child,
    request(path, init = {}) {
      const headers = new Headers();
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      if (init.admin) headers.set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
      return fetch(`${baseUrl}${path}`, { method: init.method ?? 'GET', headers });
    },
    keyCache() {
      const id = ++nextId;
      return new Promise<ChildKeyCacheState>((resolve) => {
        const onMessage = (message: ChildKeyCacheState & { id?: number }) => {
          if (message.id !== id) return;
          child.off('message', onMessage);
          resolve(message);
        };
        child.on('message', onMessage);
        child.send({ type: 'keycache', id });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      // A close that hangs must not hang the suite: then the process is killed for real.
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(kill);
    },
  };
}
