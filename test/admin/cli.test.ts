import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseApiKey } from '../../src/modules/identity/api-key-format.js';
import { KeyInvalidations } from '../../src/modules/identity/key-invalidations.js';
import { eventually } from '../support/eventually.js';
import { bootTestApp, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';

/** The compiled CLI beside this compiled test (dist/ or a TEST_DIST_DIR such as .build/admin). */
const CLI = fileURLToPath(new URL('../../src/cli/cli.js', import.meta.url));
/** Preload that lists every module a process loads (test/support/module-trace.ts). */
const MODULE_TRACE = fileURLToPath(new URL('../support/module-trace.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('operator CLI', () => {
  let t: TestApp;
  let cwd: string;

  /** Runs the CLI as an operator would, against the suite's database and queue prefix. */
  function cli(...args: string[]): Promise<Run> {
    return run([], {}, args);
  }

  /** Runs the CLI with the module trace preloaded: its result and every module it loaded. */
  async function traced(...args: string[]): Promise<Run & { modules: string[] }> {
    const file = join(cwd, `modules-${args[0]}.txt`);
    const result = await run(['--import', MODULE_TRACE], { MODULE_TRACE_FILE: file }, args);
    return { ...result, modules: readFileSync(file, 'utf8').split('\n').filter(Boolean) };
  }

  function run(nodeArgs: string[], extraEnv: Record<string, string>, args: string[]): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [...nodeArgs, CLI, ...args],
        {
          // An empty working directory: no developer .env is picked up.
          cwd,
          timeout: 60_000,
          env: {
            PATH: process.env.PATH,
            NODE_ENV: 'test',
            DATABASE_URL: t.db.url,
            DATABASE_CREATE_IF_MISSING: 'false',
            REDIS_URL: TEST_REDIS_URL,
            QUEUE_PREFIX: t.queuePrefix,
            ...extraEnv,
          },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  async function ok<T>(...args: string[]): Promise<T> {
    const run = await cli(...args);
    assert.equal(run.code, 0, `${args.join(' ')} → ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout) as T; // stdout is JSON and nothing else
  }

  before(async () => {
    t = await bootTestApp({ label: 'cli' });
    cwd = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  });
  after(async () => {
    await t.flushRedis();
    await t.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('creates a workspace, issues a key, credits and shows the wallet', async () => {
    const workspace = await ok<{ id: string; name: string; createdAt: string }>('workspace:create', '--name', 'Acme CLI');
    assert.equal(workspace.name, 'Acme CLI');
    assert.match(workspace.id, /^[0-9a-f-]{36}$/);

    const issued = await ok<{ id: string; key: string; prefix: string; environment: string; status: string }>(
      'key:issue',
      '--workspace',
      workspace.id,
      '--name',
      'backend',
    );
    assert.match(issued.key, /^svc_live_[0-9A-Za-z]{38}$/);
    assert.equal(issued.environment, 'live');
    assert.equal(issued.status, 'active');

    const credited = await ok('wallet:credit', '--workspace', workspace.id, '--amount-usd', '25.5', '--reference', 'cli-topup-1');
    assert.deepEqual(credited, { balanceUsd: 25.5, heldUsd: 0, availableUsd: 25.5 });
    // A repeat is a no-op.
    assert.deepEqual(await ok('wallet:credit', '--workspace', workspace.id, '--amount-usd', '25.5', '--reference', 'cli-topup-1'), credited);

    assert.deepEqual(await ok('wallet:show', '--workspace', workspace.id), credited);
    assert.deepEqual(await ok('wallet:show', '--workspace', workspace.id, '--environment', 'test'), { balanceUsd: 0, heldUsd: 0, availableUsd: 0 });

    // The running service sees what the CLI did: the key works and holds the money.
    const wallet = await t.request('/api/svc/v1/wallet', { key: issued.key });
    assert.equal(wallet.status, 200);
    assert.deepEqual(await wallet.json(), credited);
    const rows = await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_entry WHERE workspace_id = $1`, [workspace.id]);
    assert.equal(rows[0]!.n, '1');

    const listed = await ok<{ items: Array<{ id: string; wallet: unknown }> }>('workspace:list', '--limit', '100');
    assert.deepEqual(listed.items.find((w) => w.id === workspace.id)?.wallet, credited);

    // The service holds the key in its cache: the CLI's revoke has to reach it through Redis.
    const invalidations = t.app.get(KeyInvalidations);
    await eventually(() => Promise.resolve(invalidations.ready), (ready) => ready, 'key invalidations subscribed', 30_000);
    assert.equal((await t.request('/api/svc/v1/wallet', { key: issued.key })).status, 200);
    const parsed = parseApiKey(issued.key);
    assert.ok(parsed.ok && invalidations.cache.get(parsed.sha256.toString('hex')), 'the key is cached');

    const revoked = await ok<{ status: string }>('key:revoke', '--key', issued.id);
    assert.equal(revoked.status, 'revoked');
    assert.equal((await t.request('/api/svc/v1/wallet', { key: issued.key })).status, 401);
  });

  it('boots only what a command needs: no OpenAPI, no queues; help boots nothing', async () => {
    const packageOf = (module: string) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1];
    const listing = await traced('workspace:list', '--limit', '1');
    assert.equal(listing.code, 0, listing.stderr);
    const packages = new Set(listing.modules.map(packageOf).filter((name) => name !== undefined));
    // The trace sees both kinds of module (ES: @nestjs/core; CommonJS: typeorm, pg)…
    for (const needed of ['@nestjs/core', 'typeorm', 'pg']) assert.ok(packages.has(needed), `the trace lists ${needed}`);
    // …and none of what the HTTP app alone needs (docs/decisions.md › CLI boot).
    for (const unwanted of ['@nestjs/swagger', 'bullmq', '@nestjs/bullmq', '@bull-board/api', 'fastify', '@nestjs/platform-fastify']) {
      assert.ok(!packages.has(unwanted), `the CLI loaded ${unwanted}`);
    }
    assert.ok(!listing.modules.some((module) => /\/src\/modules\/[^/]+\/[^/]+\.controller\.js$/.test(module)), 'no controller is loaded');

    const help = await traced('help');
    assert.equal(help.code, 0, help.stderr);
    assert.deepEqual([...new Set(help.modules.map(packageOf).filter((name) => name !== undefined))], ['reflect-metadata'], 'help loads no package but reflect-metadata');
  });

  it('prints help', async () => {
    const run = await cli('help');
    assert.equal(run.code, 0);
    for (const command of ['workspace:create', 'workspace:list', 'key:issue', 'key:revoke', 'wallet:credit', 'wallet:show']) {
      assert.ok(run.stdout.includes(command), `help lists ${command}`);
    }
    const one = await cli('wallet:credit', '--help');
    assert.equal(one.code, 0);
    assert.match(one.stdout, /--amount-usd <usd>/);
  });

  it('exits 2 with a clear message on bad input, before touching anything', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /no command given/],
      [['workspace:delete'], /unknown command "workspace:delete"/],
      [['workspace:create'], /missing --name/],
      [['workspace:create', '--name', 'x', '--plan', 'gold'], /Unknown option '--plan'/],
      [['key:issue', '--workspace', 'w', '--name', 'k', '--environment', 'prod'], /--environment/],
      [['wallet:credit', '--workspace', 'w', '--amount-usd', '0', '--reference', 'r'], /--amount-usd: must be greater than 0/],
      [['wallet:credit', '--workspace', 'w', '--amount-usd', '-5', '--reference', 'r'], /--amount-usd/],
      [['wallet:credit', '--workspace', 'w', '--amount-usd', 'ten', '--reference', 'r'], /--amount-usd/],
      [['wallet:credit', '--workspace', 'w', '--amount-usd', '1.1234567', '--reference', 'r'], /--amount-usd: must have at most 6 decimal places/],
      [['wallet:credit', '--workspace', 'w', '--amount-usd', '5'], /missing --reference/],
      [['workspace:list', '--limit', '500'], /--limit/],
    ];
    const entries = async () => (await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger_entry'))[0]!.n;
    const before = await entries();
    const runs = await Promise.all(cases.map(([args]) => cli(...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const run = runs[i]!;
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stdout, '', 'nothing on stdout');
    }
    assert.equal(await entries(), before);
  });

  it('exits 1 when the service refuses (unknown workspace, reused reference)', async () => {
    const missing = await cli('wallet:show', '--workspace', '5d0e8a53-52b7-4a5e-9c37-5a7f1d3b9d11');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /workspace not found \(admin\.not_found\)/);
    assert.equal(missing.stdout, '');

    const malformed = await cli('key:revoke', '--key', 'not-a-key-id');
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /API key not found/);

    const workspace = await ok<{ id: string }>('workspace:create', '--name', 'Conflicts');
    await ok('wallet:credit', '--workspace', workspace.id, '--amount-usd', '10', '--reference', 'dup');
    const conflict = await cli('wallet:credit', '--workspace', workspace.id, '--amount-usd', '11', '--reference', 'dup');
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, /admin\.conflict/);
    assert.deepEqual(await ok('wallet:show', '--workspace', workspace.id), { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
  });
});
