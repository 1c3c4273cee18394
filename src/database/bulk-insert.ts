import type { EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { type NamedStatement, namedQueryIn } from './named-query.js';
import { entityManagerOf, type TransactionHandle } from './transaction.js';

/** The multi-row insert of one entity: its statement and the columns its parameters follow. */
interface BulkInsertPlan {
  statement: NamedStatement;
  columns: ColumnMetadata[];
}

const plans = new WeakMap<EntityMetadata, BulkInsertPlan>();

function planOf(metadata: EntityMetadata, escape: (name: string) => string, normalizeType: (column: ColumnMetadata) => string): BulkInsertPlan {
  let plan = plans.get(metadata);
  if (plan) return plan;
  // What the query builder would fill in on the entity after the insert (defaults, generated,
  // create/update dates, versions): none of the tables written this way has any, and this insert
  // returns nothing, so such an entity must keep going through TypeORM.
  const returned = metadata.getInsertionReturningColumns();
  if (returned.length > 0) throw new Error(`insertRows(${metadata.tableName}): ${returned.map((c) => c.propertyPath).join(', ')} would be filled in by the database`);
  const columns = metadata.columns.filter((column) => column.isInsert);
  const arrayColumn = columns.find((column) => column.isArray);
  if (arrayColumn) throw new Error(`insertRows(${metadata.tableName}): array column ${arrayColumn.propertyPath} cannot be unnested`);
  const table = metadata.tablePath.split('.').map(escape).join('.');
  const names = columns.map((column) => escape(column.databaseName)).join(', ');
  const arrays = columns.map((column, i) => `$${i + 1}::${normalizeType(column)}[]`).join(', ');
  plan = {
    statement: { name: `insert_rows_${metadata.tablePath}`, text: `INSERT INTO ${table} (${names}) SELECT * FROM unnest(${arrays})` },
    columns,
  };
  plans.set(metadata, plan);
  return plan;
}

/**
 * Inserts `rows` of one entity in one statement whose text depends on the table only:
 * `INSERT INTO t (…) SELECT * FROM unnest($1::type[], …)`, one array per column. It runs as a
 * named statement on the transaction's connection, so PostgreSQL parses and plans it once per
 * connection, and it skips the query builder's per-row, per-parameter work (docs/benchmarks.md ›
 * Issue 17 figures). Values are what TypeORM would write: each column's transformer, then the
 * driver's conversion (jsonb as JSON text, dates); an undefined value is NULL, as TypeORM writes
 * it for a column without a default. Errors are TypeORM's `QueryFailedError`, as from `insert`
 * (namedQueryIn).
 */
export async function insertRows<E extends ObjectLiteral>(tx: TransactionHandle, target: EntityTarget<E>, rows: readonly E[]): Promise<void> {
  if (rows.length === 0) return;
  const manager = entityManagerOf(tx);
  const driver = manager.connection.driver;
  const { statement, columns } = planOf(manager.connection.getMetadata(target), (name) => driver.escape(name), (column) => driver.normalizeType(column));
  const values = columns.map((column) => rows.map((row) => driver.preparePersistentValue(column.getEntityValue(row), column) ?? null));
  await namedQueryIn(tx, statement, values);
}
