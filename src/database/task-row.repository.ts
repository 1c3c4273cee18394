import { Logger } from '@nestjs/common';
import type { DataSource, FindOptionsWhere, ObjectLiteral, QueryDeepPartialEntity, Repository } from 'typeorm';
import { insertRows } from './bulk-insert.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from './transaction.js';

/** The columns every domain's task row shares: its owner and the retention of its stored media. */
export interface TaskRow extends ObjectLiteral {
  id: string;
  apiKeyId: string;
  mediaKey: string | null;
  expiresAt: Date | null;
  mediaDeletedAt: Date | null;
}

/**
 * The statements a task table of any domain (video, audio) runs the same way; each domain's
 * repository extends this with its own listing, pending and compare-and-set guards.
 */
export abstract class TaskRowRepository<E extends TaskRow> {
  protected constructor(
    protected readonly tasks: Repository<E>,
    protected readonly db: DataSource,
  ) {}

  /** One transaction for the task row and what must commit with it (hold, idempotency key, outbox rows). */
  transaction<T>(work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
    return inTransaction(this.db, work);
  }

  private readonly log = new Logger('TaskState');

  /** Logged at info as `task created` (inside the creating transaction: a refusal after it rolls the row back). */
  async insert(tx: TransactionHandle, task: E): Promise<void> {
    await insertRows(tx, this.tasks.target, [task]);
    this.log.log({ msg: 'task created', taskId: task.id, ...('status' in task ? { status: task.status } : {}) });
  }

  /** Several rows in one statement (a batch of creations, TaskCreations); each logged as `insert` logs it. */
  async insertMany(tx: TransactionHandle, tasks: E[]): Promise<void> {
    if (tasks.length === 0) return;
    await insertRows(tx, this.tasks.target, tasks);
    for (const task of tasks) this.log.log({ msg: 'task created', taskId: task.id, ...('status' in task ? { status: task.status } : {}) });
  }

  findOwned(apiKeyId: string, id: string): Promise<E | null> {
    return this.tasks.findOneBy({ apiKeyId, id } as FindOptionsWhere<E>);
  }

  /** Worker-side read (the job carries only the task id). */
  findById(id: string, tx?: TransactionHandle): Promise<E | null> {
    const where = { id } as FindOptionsWhere<E>;
    return tx ? entityManagerOf(tx).findOneBy(this.tasks.target, where) : this.tasks.findOneBy(where);
  }

  /** Finished tasks whose media retention has ended and whose media is still stored. */
  findExpiredMedia(now: Date, limit: number): Promise<E[]> {
    return this.tasks
      .createQueryBuilder('t')
      .where('t.media_key IS NOT NULL AND t.media_deleted_at IS NULL AND t.expires_at <= :now', { now })
      .orderBy('t.expires_at', 'ASC')
      .limit(limit)
      .getMany();
  }

  async markMediaDeleted(id: string, at: Date): Promise<void> {
    await this.tasks.update({ id } as FindOptionsWhere<E>, { mediaDeletedAt: at } as Partial<E> as QueryDeepPartialEntity<E>);
  }

  /** The manager that writes: the transaction's when given, else the repository's own. */
  protected managerOf(tx?: TransactionHandle) {
    return tx ? entityManagerOf(tx) : this.tasks.manager;
  }
}
