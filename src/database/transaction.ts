import type { DataSource, EntityManager } from 'typeorm';

declare const transaction: unique symbol;

/**
 * An open database transaction, opaque to the services that receive it: a domain opens one
 * (`inTransaction`) for its own row and passes it to the services whose writes must commit with
 * that row (`WalletService.hold(input, tx)`), without knowing how they write. Only repositories
 * look inside (`entityManagerOf`).
 */
export type TransactionHandle = { readonly [transaction]: true };

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export function inTransaction<T>(db: DataSource, work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
  return db.transaction((manager) => work(manager as unknown as TransactionHandle));
}

/** The transaction's TypeORM manager: for repositories, the one layer that writes SQL. */
export function entityManagerOf(tx: TransactionHandle): EntityManager {
  return tx as unknown as EntityManager;
}
