import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../libs/common/index.js';
import { createApp } from '../../src/app/create-app.js';
import type { AppModuleOptions } from '../../src/app.module.js';
import { AppConfig } from '../../src/config/app-config.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import type { DestinationStream } from 'pino';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  baseUrl: string;
  db: TestDatabase;
  /** Every BullMQ key of this app starts with `${queuePrefix}:`. */
  queuePrefix: string;
  mediaDir: string;
  /** fetch against the app with JSON defaults. */
  request(path: string, init?: RequestInit & { json?: unknown; key?: string; admin?: boolean }): Promise<Response>;
  /** Deletes every Redis key of this app (a "Redis flush" that spares other suites). */
  flushRedis(): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions extends AppModuleOptions {
  env?: Record<string, string>;
  label?: string;
  /** Reuse a database (restart scenarios); it is not dropped on close. */
  db?: TestDatabase;
  /**
   * Runs after the app is built and before it listens (Nest registers its routes on listen),
   * e.g. to add a Fastify `onRoute` hook that sees every route.
   */
  beforeListen?: (app: NestFastifyApplication) => void | Promise<void>;
  /** Where the app's log lines go (a stream a test reads); stdout otherwise. */
  logDestination?: DestinationStream;
}

/** Deletes every Redis key under a queue prefix (a "Redis flush" that spares other suites). */
export async function deleteQueueKeys(queuePrefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Boots the whole app as production does (createApp) on its own database, queue prefix and
 * media folder, listening on a free loopback port.
 */
export async function bootTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const ownsDb = !options.db;
  const db = options.db ?? (await createTestDatabase(options.label));
  const queuePrefix = `t${randomBytes(5).toString('hex')}`;
  // An app that shares another's queue prefix (a second worker) leaves its keys to that owner.
  const ownsQueue = !options.env?.QUEUE_PREFIX;
  const mediaDir = mkdtempSync(join(tmpdir(), 'svc-media-'));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    DATABASE_CREATE_IF_MISSING: 'false',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    MEDIA_DIR: mediaDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DEMO_SEED: 'false',
    OUTBOUND_ALLOW_HTTP: 'true',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    PORT: '0',
    ...options.env,
  };
  // The public base URL must name the real port, known only after listen: boot on a fixed free port.
  const port = env.PORT === '0' ? await freePort() : Number(env.PORT);
  env.PORT = String(port);
  env.PUBLIC_BASE_URL ??= `http://127.0.0.1:${port}`;
  const config = AppConfig.from(env);
  const app = await createApp(config, { clock: options.clock, imports: options.imports, media: options.media, logDestination: options.logDestination });
  await options.beforeListen?.(app);
  await app.listen({ port, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const flushRedis = () => deleteQueueKeys(queuePrefix);

  return {
    app,
    config,
    baseUrl,
    db,
    queuePrefix,
    mediaDir,
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      if (init.admin) headers.set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
      return fetch(`${baseUrl}${path}`, { ...init, headers, body });
    },
    flushRedis,
    async close() {
      await app.close();
      if (ownsQueue) await flushRedis();
      if (ownsDb) await db.drop();
      rmSync(mediaDir, { recursive: true, force: true });
    },
  };
}

export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export type { Clock };
