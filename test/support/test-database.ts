import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** The server every suite uses; each suite gets a database of its own on it. */
export const TEST_PG_URL = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';

export interface TestDatabase {
  name: string;
  url: string;
  /** A client on this database for assertions on rows and sums. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh, empty database (the app's migrations create the schema when it boots). */
export async function createTestDatabase(label = 'suite'): Promise<TestDatabase> {
  const name = `svc_t_${label.replace(/[^a-z0-9]/gi, '').slice(0, 20).toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${TEST_PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = `${TEST_PG_URL}/${name}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // pool.end() resolves before idle connections have closed, so DROP … WITH (FORCE) can still
  // terminate one; that error reaches the pool, and an unheard pool error crashes the suite.
  pool.on('error', () => undefined);
  return {
    name,
    url,
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      return (await pool.query(sql, params)).rows as T[];
    },
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: `${TEST_PG_URL}/postgres` });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
