import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DemoSeeder } from '../../src/modules/admin/demo-seeder.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { PRODUCTION_ENV } from '../support/production-env.js';

/** Runs `fn` with process.stdout captured (the seeder prints its key there). */
async function capturingStdout<T>(fn: () => Promise<T>): Promise<{ result: T; printed: string }> {
  const write = process.stdout.write.bind(process.stdout);
  let printed = '';
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    printed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { result: await fn(), printed };
  } finally {
    process.stdout.write = write;
  }
}

describe('first start', () => {
  describe('on a clean database', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase('migrate');
    });
    after(async () => {
      await db.drop();
    });

    it('creates the schema through the committed migrations', async () => {
      const before = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM information_schema.tables WHERE table_schema = 'public'`);
      assert.equal(before[0]!.n, '0', 'starts empty');

      const t = await bootTestApp({ db });
      try {
        const tables = (await db.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)).map(
          (r) => r.table_name,
        );
        for (const table of ['workspace', 'api_key', 'wallet', 'hold', 'ledger_entry', 'media_object', 'migrations']) {
          assert.ok(tables.includes(table), `table ${table} exists (have: ${tables.join(', ')})`);
        }
        const migrations = (await db.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).map((r) => r.name);
        assert.equal(migrations[0], 'Platform1763800000000');
        const functions = (await db.query<{ proname: string }>(`SELECT proname FROM pg_proc WHERE proname LIKE 'svc\\_%'`)).map((r) => r.proname);
        assert.ok(functions.includes('svc_credit') && functions.includes('svc_resolve_hold'));
        // The schema works: the admin API writes and reads through it.
        const created = await t.request('/admin/v1/workspaces', { admin: true, method: 'POST', json: { name: 'fresh' } });
        assert.equal(created.status, 200);
        // Nothing seeded: DEMO_SEED is off in tests unless asked for.
        assert.equal((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM workspace'))[0]!.n, '1');
      } finally {
        await t.close();
      }

      // A second boot finds nothing to apply.
      const again = await bootTestApp({ db });
      try {
        const count = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM migrations');
        assert.equal(Number(count[0]!.n), (await db.query('SELECT name FROM migrations')).length);
        assert.equal(Number(count[0]!.n) >= 1, true);
      } finally {
        await again.close();
      }
    });
  });

  describe('demo seed', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase('seed');
    });
    after(async () => {
      await db.drop();
    });

    it('seeds a demo workspace with 25 USD and prints its key once, then never again', async () => {
      const first = await bootTestApp({ db, env: { DEMO_SEED: 'true' } });
      let key: string;
      try {
        const { result, printed } = await capturingStdout(() => first.app.get(DemoSeeder).seedOnFirstStart());
        assert.ok(result, 'a key is returned');
        key = result;
        assert.match(key, /^svc_live_[0-9A-Za-z]{38}$/);
        assert.ok(printed.includes(key), 'the key is printed');
        assert.ok(printed.includes('25 USD'));

        const wallet = await first.request('/api/svc/v1/wallet', { key });
        assert.equal(wallet.status, 200);
        assert.deepEqual(await wallet.json(), { balanceUsd: 25, heldUsd: 0, availableUsd: 25 });

        // Only the hash is stored.
        const stored = await db.query<{ prefix: string }>('SELECT prefix FROM api_key');
        assert.equal(stored.length, 1);
        assert.ok(key.startsWith(stored[0]!.prefix));
        const leaked = await db.query(`SELECT 1 FROM api_key WHERE encode(secret_sha256, 'escape') LIKE $1 OR name LIKE $1 OR prefix = $2`, [`%${key}%`, key]);
        assert.equal(leaked.length, 0);

        // Calling it again in the same process seeds nothing either.
        assert.equal(await first.app.get(DemoSeeder).seedOnFirstStart(), null);
      } finally {
        await first.close();
      }

      const second = await bootTestApp({ db, env: { DEMO_SEED: 'true' } });
      try {
        const { result, printed } = await capturingStdout(() => second.app.get(DemoSeeder).seedOnFirstStart());
        assert.equal(result, null);
        assert.equal(printed, '');
        assert.equal((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM workspace'))[0]!.n, '1');
        assert.equal((await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ledger_entry`))[0]!.n, '1');
        // The demo key still works after the restart.
        const wallet = await second.request('/api/svc/v1/wallet', { key });
        assert.deepEqual(await wallet.json(), { balanceUsd: 25, heldUsd: 0, availableUsd: 25 });
      } finally {
        await second.close();
      }
    });

    it('seeds once when several instances start together on an empty database', async () => {
      const shared = await createTestDatabase('seedrace');
      const apps: TestApp[] = [];
      try {
        // Boot sequentially (migrations), then seed concurrently as replicas would.
        for (let i = 0; i < 3; i++) apps.push(await bootTestApp({ db: shared, env: { DEMO_SEED: 'true' } }));
        const { result } = await capturingStdout(() => Promise.all(apps.map((a) => a.app.get(DemoSeeder).seedOnFirstStart())));
        assert.equal(result.filter((k) => k !== null).length, 1);
        assert.equal((await shared.query<{ n: string }>('SELECT count(*)::text AS n FROM workspace'))[0]!.n, '1');
      } finally {
        for (const a of apps) await a.close();
        await shared.drop();
      }
    });

    it('does not seed in production or when DEMO_SEED is off', async () => {
      const production = { ...PRODUCTION_ENV, DEMO_SEED: 'true' };
      for (const env of [{ DEMO_SEED: 'false' }, production]) {
        const app = await bootTestApp({ env, label: 'noseed' });
        try {
          assert.equal(await app.app.get(DemoSeeder).seedOnFirstStart(), null, JSON.stringify(env));
          assert.equal((await app.db.query<{ n: string }>('SELECT count(*)::text AS n FROM workspace'))[0]!.n, '0');
        } finally {
          await app.close();
        }
      }
    });
  });
});
