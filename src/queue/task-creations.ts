import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JobsOptions } from 'bullmq';
import type { DataSource } from 'typeorm';
import { GroupCommit } from '../../libs/common/index.js';
import { isConnectionError } from '../database/connection-errors.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../database/transaction.js';
import type { JobName, JobOf, QueueName } from './queue-names.js';
import { Queues } from './queues.js';

/** A job a creation adds once its row is committed (deterministic id, as `Queues.add`). */
export interface CreationJob<N extends JobName = JobName> {
  queue: QueueName;
  name: N;
  data: JobOf<N>;
  jobId: string;
  options?: JobsOptions;
}

/** One creation's answer from a set-based writer: its result, or the error that refused it (nothing of it written). */
export type CreationOutcome<T> = { value: T } | { error: unknown };

/**
 * How a domain creates one kind of task: `write` makes one creation's rows in the transaction it
 * is given (hold, task row, idempotency row, …) and throws to refuse it; `jobs` names what to
 * enqueue after the commit. `writeAll`, when given, writes several creations of this kind at
 * once (a few set-based statements instead of a few per creation) and must judge them exactly
 * as `write` called on each in order would, a refused one leaving nothing behind.
 */
export interface CreationKind<I, T> {
  readonly name: string;
  write(tx: TransactionHandle, input: I): Promise<T>;
  writeAll?(tx: TransactionHandle, inputs: I[]): Promise<Array<CreationOutcome<T>>>;
  jobs(result: T, input: I): CreationJob[];
}

/** The steps of the creation most domains make: a hold, then the task row carrying its id. */
export interface HoldThenRowSteps<H, R> {
  hold(input: H, tx: TransactionHandle): Promise<string>;
  /** The row with the hold's id set (a new entity: the input row is left as it was). */
  withHold(row: R, holdId: string): R;
  insert(tx: TransactionHandle, row: R): Promise<void>;
}

/**
 * A creation kind that holds, then inserts the row with that hold's id, in the transaction it is
 * given; no job unless `jobs` names them. Video, images and the alternate provider share it
 * (video adds its set-based `writeAll`).
 */
export function holdThenRow<H, R>(
  name: string,
  steps: HoldThenRowSteps<H, R>,
  jobs: (row: R) => CreationJob[] = () => [],
): CreationKind<{ hold: H; row: R }, R> {
  return {
    name,
    write: async (tx, { hold, row }) => {
      const withHold = steps.withHold(row, await steps.hold(hold, tx));
      await steps.insert(tx, withHold);
      return withHold;
    },
    jobs,
  };
}

interface Pending {
  kind: CreationKind<unknown, unknown>;
  input: unknown;
}

/** Most creations one transaction carries. */
export const CREATION_MAX_BATCH = 64;

/**
 * Group commit for task creations (issue 17): creations that arrive while one is being written
 * wait in memory and are then written together, in one transaction (one commit, one fsync), in
 * arrival order, and their jobs go to Redis with one `addBulk` per queue after that commit. Each
 * creation's promise settles only then: its row is durable and its job is in Redis (or, if Redis
 * failed, the reconciler will add it) — the same guarantee as one creation alone. The next
 * batch's transaction does not wait for those jobs: it goes as soon as this batch has committed.
 *
 * A creation alone (nothing in flight) takes its own transaction, exactly as before. In a batch,
 * a batch of one kind that has `writeAll` is written set-based; otherwise each creation runs
 * under its own SAVEPOINT, so one refused creation (402, 409, 429, a unique violation) rolls
 * back only itself. When the batch's transaction itself fails (deadlock with another process,
 * lost connection, a set-based statement failing on some row), every creation of the batch is
 * done again alone, one after another: each gets what the sequential path gives it.
 */
@Injectable()
export class TaskCreations {
  private readonly logger = new Logger(TaskCreations.name);
  private readonly group = new GroupCommit<Pending, unknown>((batch) => this.runBatch(batch), CREATION_MAX_BATCH);
  private redone = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly queues: Queues,
  ) {}

  /** Writes one creation (with others arriving meanwhile) and enqueues its jobs; the result of `kind.write`. */
  create<I, T>(kind: CreationKind<I, T>, input: I): Promise<T> {
    return this.group.submit({ kind: kind as CreationKind<unknown, unknown>, input }) as Promise<T>;
  }

  /** Transactions written and creations carried (calls < items means batches formed); batches done again alone. */
  counters(): { calls: number; items: number; largest: number; redone: number } {
    return { ...this.group.counters(), redone: this.redone };
  }

  /**
   * One batch: its transaction, then its jobs. The answers are promises that settle once the jobs
   * are in Redis, so the group commit sends the next batch's transaction as soon as this one has
   * committed, while this batch's `addBulk` is on its way (one round trip less per batch on the
   * path every creation waits on).
   */
  private async runBatch(batch: Pending[]): Promise<unknown[]> {
    if (batch.length === 1) return [(await this.alone(batch[0]!)).answer];
    let outcomes: Array<CreationOutcome<unknown>>;
    try {
      outcomes = await inTransaction(this.db, (tx) => this.writeBatch(tx, batch));
    } catch (error) {
      this.redone++;
      this.logger.warn({ msg: 'creation batch failed; each creation is done again alone', creations: batch.length, err: error });
      const results: unknown[] = [];
      for (const pending of batch) {
        try {
          results.push((await this.alone(pending)).answer);
        } catch (aloneError) {
          results.push(rejected(aloneError));
        }
      }
      return results;
    }
    const enqueued = this.enqueue(
      batch.flatMap((pending, i) => {
        const outcome = outcomes[i]!;
        return 'value' in outcome ? pending.kind.jobs(outcome.value, pending.input) : [];
      }),
    );
    return outcomes.map((outcome) => ('value' in outcome ? enqueued.then(() => outcome.value) : rejected(outcome.error)));
  }

  /** The batch's writes: set-based when every creation is of one kind that can, else one savepoint each. */
  private async writeBatch(tx: TransactionHandle, batch: Pending[]): Promise<Array<CreationOutcome<unknown>>> {
    const kind = batch[0]!.kind;
    if (kind.writeAll && batch.every((pending) => pending.kind === kind)) {
      const outcomes = await kind.writeAll(tx, batch.map((pending) => pending.input));
      if (outcomes.length !== batch.length) throw new Error(`${kind.name}.writeAll: ${outcomes.length} outcomes for ${batch.length} creations`);
      return outcomes;
    }
    const manager = entityManagerOf(tx);
    const outcomes: Array<CreationOutcome<unknown>> = [];
    // One round trip per creation: releasing the last savepoint and opening the next go together
    // (no parameters: one simple query carries both statements).
    await manager.query('SAVEPOINT creation');
    for (const [i, pending] of batch.entries()) {
      if (i > 0) await manager.query('RELEASE SAVEPOINT creation; SAVEPOINT creation');
      try {
        outcomes.push({ value: await pending.kind.write(tx, pending.input) });
      } catch (error) {
        // The transaction itself is lost or chosen as a deadlock victim: the whole batch goes again alone.
        if (abortsBatch(error)) throw error;
        await manager.query('ROLLBACK TO SAVEPOINT creation');
        outcomes.push({ error });
      }
    }
    return outcomes;
  }

  /**
   * One creation in its own transaction, then its jobs: the path of a creation that found nothing
   * in flight. Resolves once committed (a refusal rejects); `answer` settles once the jobs are in Redis.
   */
  private async alone(pending: Pending): Promise<{ answer: Promise<unknown> }> {
    const value = await inTransaction(this.db, (tx) => pending.kind.write(tx, pending.input));
    return { answer: this.enqueue(pending.kind.jobs(value, pending.input)).then(() => value) };
  }

  /** One `addBulk` per queue. A Redis failure is logged: the rows are committed and the reconciler enqueues them. */
  private async enqueue(jobs: CreationJob[]): Promise<void> {
    const byQueue = new Map<QueueName, CreationJob[]>();
    for (const job of jobs) byQueue.set(job.queue, [...(byQueue.get(job.queue) ?? []), job]);
    await Promise.all(
      [...byQueue].map(async ([queue, queued]) => {
        try {
          await this.queues.addBulk(queue, queued);
        } catch (error) {
          this.logger.error(`enqueue of ${queued.length} ${queue} job(s) failed; the reconciler will retry: ${String(error)}`);
        }
      }),
    );
  }
}

/** A rejected promise that is handled (GroupCommit resolves the waiter with it). */
function rejected(error: unknown): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => undefined);
  return promise;
}

/** Errors after which the transaction cannot go on: class 40 (deadlock, serialization), a cancel, a lost connection. */
function abortsBatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && (code.startsWith('40') || code === '57014')) || isConnectionError(error);
}
