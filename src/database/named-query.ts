import { type DataSource, QueryFailedError } from 'typeorm';
import { entityManagerOf, type TransactionHandle } from './transaction.js';

/** A prepared statement with a name: pg parses and plans it once per connection. */
export interface NamedStatement {
  name: string;
  text: string;
}

interface NamedQueryClient {
  query<T>(config: NamedStatement & { values: unknown[] }): Promise<{ rows: T[] }>;
}

/**
 * pg's query config. Written out, not `{ ...statement, values }`: on Node 20 a property after a
 * spread costs ~0.35 µs (paid-task-columns.ts), and this runs for every wallet and creation call.
 */
const withValues = (statement: NamedStatement, values: unknown[]) => ({ name: statement.name, text: statement.text, values });

/**
 * Runs a named statement on the pg pool under TypeORM (same connections, same type parsing as
 * `db.query`), for queries on the hot path of every request (docs/benchmarks.md › Text). Falls
 * back to `db.query` if TypeORM's driver ever stops exposing its pool.
 */
export async function namedQuery<T>(db: DataSource, statement: NamedStatement, values: unknown[]): Promise<T[]> {
  const pool = (db.driver as unknown as { master?: Partial<NamedQueryClient> }).master;
  if (typeof pool?.query !== 'function') return db.query(statement.text, values);
  return (await (pool as NamedQueryClient).query<T>(withValues(statement, values))).rows;
}

/**
 * The same inside a transaction, on its connection (TypeORM's query runner holds it once the
 * transaction has begun), for the statements of task creations. Errors are TypeORM's
 * `QueryFailedError`, as from `query`; without a connection in hand it is `query` itself.
 */
export async function namedQueryIn<T>(tx: TransactionHandle, statement: NamedStatement, values: unknown[]): Promise<T[]> {
  const manager = entityManagerOf(tx);
  const client = (manager.queryRunner as unknown as { databaseConnection?: Partial<NamedQueryClient> } | undefined)?.databaseConnection;
  if (typeof client?.query !== 'function') return manager.query(statement.text, values);
  try {
    return (await (client as NamedQueryClient).query<T>(withValues(statement, values))).rows;
  } catch (error) {
    throw new QueryFailedError(statement.text, values, error as Error);
  }
}
