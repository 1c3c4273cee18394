/**
 * The wallet's set statements on a database created moments before (migration
 * PlannerProofWallet1763800001500): PL/pgSQL keeps the generic plan of each statement once a
 * session has made five calls, and on a new database those plans are made for a nearly empty,
 * never-analyzed `hold`. They must still read `hold` and `wallet` by primary key, never by a
 * sequential scan, or every batch scans the whole table until the first autoanalyze.
 * `plan_cache_mode = force_generic_plan` makes the session use those generic plans from the
 * first call; pg_stat_xact_user_tables counts the scans of the session's open transaction.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { DataSource, type QueryRunner } from 'typeorm';
import { PlannerProofWallet1763800001500 } from '../../src/database/migrations/1763800001500-planner-proof-wallet.js';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

describe('wallet set statements on a fresh database: primary-key lookups whatever the statistics', () => {
  let db: TestDatabase;
  let session: pg.Client;
  const workspace = randomUUID();

  before(async () => {
    db = await createTestDatabase('walletplans');
    const migrations = new DataSource({ type: 'postgres', url: db.url, migrations: MIGRATIONS });
    await migrations.initialize();
    await migrations.runMigrations({ transaction: 'each' });
    await migrations.destroy();
    await db.query(`INSERT INTO workspace (id, name) VALUES ($1, 'plans')`, [workspace]);
    await db.query(`INSERT INTO wallet (workspace_id, environment, balance_micros) VALUES ($1, 'live', 1000000000)`, [workspace]);
    session = new pg.Client({ connectionString: db.url });
    await session.connect();
    await session.query('SET plan_cache_mode = force_generic_plan');
  });

  after(async () => {
    await session?.end();
    await db?.drop();
  });

  it('svc_hold_many and svc_resolve_many (set-based and item by item) scan neither hold nor wallet', async () => {
    const [{ analyzed }] = (await session.query(`SELECT count(*)::int AS analyzed FROM pg_stat_user_tables WHERE relname = 'hold' AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`)).rows;
    assert.equal(analyzed, 0, 'the case under test: hold never analyzed');
    const n = 8;
    const holdBatch = async () => {
      const ids = Array.from({ length: n }, () => randomUUID());
      const rows = (
        await session.query<{ hold_id: string | null }>(
          `SELECT hold_id FROM svc_hold_many($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::bigint[], $6::text[], $7::text[]) ORDER BY idx`,
          [ids, ids.map(() => workspace), ids.map(() => 'live'), ids.map(() => null), ids.map(() => '100'), ids.map(() => 'plans'), ids.map((_, i) => String(i))],
        )
      ).rows;
      assert.deepEqual(rows.map((row) => row.hold_id), ids);
      return ids;
    };
    const resolveBatch = async (ids: string[], measured: string) =>
      (await session.query<{ changed: boolean }>(`SELECT changed FROM svc_resolve_many($1::uuid[], $2::bigint[], $3::text[]) ORDER BY idx`, [ids, ids.map(() => measured), ids.map(() => 'settled')]))
        .rows;

    await session.query('BEGIN');
    try {
      // Set-based (every charge within its hold), then the item-by-item fallback (a charge above it).
      for (let round = 0; round < 3; round++) assert.ok((await resolveBatch(await holdBatch(), '60')).every((row) => row.changed));
      assert.ok((await resolveBatch(await holdBatch(), '150')).every((row) => row.changed));
      const scans = (await session.query<{ relname: string; seq_scan: string }>(`SELECT relname, seq_scan::text FROM pg_stat_xact_user_tables WHERE relname IN ('hold', 'wallet') ORDER BY relname`)).rows;
      assert.deepEqual(scans, [
        { relname: 'hold', seq_scan: '0' },
        { relname: 'wallet', seq_scan: '0' },
      ]);
    } finally {
      await session.query('ROLLBACK');
    }
  });

  it('the migration goes down (the join forms of before) and up again', async () => {
    const migration = new PlannerProofWallet1763800001500();
    const runner = { query: (sql: string) => db.query(sql) } as unknown as QueryRunner;
    const lateral = async () =>
      (await db.query<{ proname: string }>(`SELECT proname FROM pg_proc WHERE proname IN ('svc_hold_many', 'svc_resolve_many') AND prosrc LIKE '%) AS k%' ORDER BY proname`)).map((row) => row.proname);
    assert.deepEqual(await lateral(), ['svc_hold_many', 'svc_resolve_many']);
    await migration.down(runner);
    assert.deepEqual(await lateral(), []);
    await migration.up(runner);
    assert.deepEqual(await lateral(), ['svc_hold_many', 'svc_resolve_many']);
  });
});
