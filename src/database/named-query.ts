import type { DataSource } from 'typeorm';

/** A prepared statement with a name: pg parses and plans it once per connection. */
export interface NamedStatement {
  name: string;
  text: string;
}

interface NamedQueryPool {
  query<T>(config: NamedStatement & { values: unknown[] }): Promise<{ rows: T[] }>;
}

/**
 * Runs a named statement on the pg pool under TypeORM (same connections, same type parsing as
 * `db.query`), for queries on the hot path of every request (docs/benchmarks.md › Text). Falls
 * back to `db.query` if TypeORM's driver ever stops exposing its pool.
 */
export async function namedQuery<T>(db: DataSource, statement: NamedStatement, values: unknown[]): Promise<T[]> {
  const pool = (db.driver as unknown as { master?: Partial<NamedQueryPool> }).master;
  if (typeof pool?.query !== 'function') return db.query(statement.text, values);
  return (await (pool as NamedQueryPool).query<T>({ ...statement, values })).rows;
}
