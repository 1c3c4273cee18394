import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { KeyEnvironment } from '../identity/index.js';
import { namedQuery, namedQueryIn, type NamedStatement } from '../../database/named-query.js';
import type { TransactionHandle } from '../../database/transaction.js';
import { GroupCommit } from '../../../libs/common/index.js';
import { HoldEntity, type HoldStatus } from './hold.entity.js';
import { LedgerEntryEntity, type LedgerKind } from './ledger-entry.entity.js';

/** What the admin ledger list narrows by (every field optional). */
export interface LedgerFilter {
  environment?: KeyEnvironment;
  kind?: LedgerKind;
  subjectType?: string;
  subjectId?: string;
}

export interface WalletFigures {
  balanceMicros: bigint;
  heldMicros: bigint;
}

export interface HoldInput {
  workspaceId: string;
  environment: KeyEnvironment;
  apiKeyId: string | null;
  amountMicros: bigint;
  subjectType: string;
  subjectId: string;
}

export interface HoldResolution {
  status: HoldStatus;
  amountMicros: bigint;
  capturedMicros: bigint;
  uncollectedMicros: bigint;
  /** False when the hold had already been resolved (the call changed nothing). */
  changed: boolean;
}

/** A resolution as the repository answers it: with the hold's subject type (metrics by kind). */
export interface ResolvedHold extends HoldResolution {
  subjectType: string | null;
}

/**
 * The hold statement (see `hold`): no row when the available balance does not cover `$3`.
 * `walletsFrom` joins the wallet update to a row source (the pool's asynchronous commit).
 */
const holdStatement = (walletsFrom = '') => `WITH ${walletsFrom ? `${walletsFrom}, ` : ''}w AS (
         UPDATE wallet SET held_micros = held_micros + $3, version = version + 1, updated_at = now()${walletsFrom ? ' FROM async_commit' : ''}
         WHERE workspace_id = $1 AND environment = $2 AND balance_micros - held_micros >= $3
         RETURNING workspace_id, environment
       ), h AS (
         INSERT INTO hold (id, workspace_id, environment, api_key_id, amount_micros, subject_type, subject_id)
         SELECT $4, workspace_id, environment, $5, $3, $6, $7 FROM w
         RETURNING id, workspace_id, environment, amount_micros, subject_type, subject_id
       )
       INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
       SELECT workspace_id, environment, 'hold', amount_micros, 0, amount_micros, id, subject_type, subject_id FROM h
       RETURNING hold_id`;

/**
 * Holds on the pool commit asynchronously (issue 17, decision 2; docs/decisions.md ›
 * Asynchronous commit for pool holds): `set_config(…, true)` lasts until the end of the
 * statement's own transaction, so only that commit skips the WAL flush. The wallet update reads
 * from it, so a hold is never written without it. Settlements, releases and credits stay
 * durable, and PostgreSQL flushes WAL in order: a durable settlement makes its hold durable too.
 */
const ASYNC_COMMIT = `async_commit AS (SELECT set_config('synchronous_commit', 'off', true))`;

/** A hold on the pool (asynchronous commit). */
export const HOLD: NamedStatement = { name: 'svc_wallet_hold_async', text: holdStatement(ASYNC_COMMIT) };

/** A hold inside the caller's transaction: it commits as that transaction does (durably). */
const HOLD_IN_TRANSACTION: NamedStatement = { name: 'svc_wallet_hold_in_transaction', text: holdStatement() };

/** A resolution, with its hold's subject type (read as the hold was before it: it never changes). */
export const RESOLVE: NamedStatement = {
  name: 'svc_wallet_resolve_hold',
  text: 'SELECT r.*, (SELECT h.subject_type FROM hold h WHERE h.id = $1) AS subject_type FROM svc_resolve_hold($1, $2, $3) AS r',
};

/** A settlement or release of a hold the database does not have (migration LostHolds1763800001400). */
const CHARGE_LOST_HOLD = 'SELECT * FROM svc_charge_lost_hold($1, $2, $3, $4, $5, $6, $7, $8, $9)';

/** The batched hold call (migration WalletBatch1763800000200), one array per HoldValues column. */
const HOLD_MANY_CALL = 'svc_hold_many($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::bigint[], $6::text[], $7::text[])';

/** Many holds in one call and one commit, asynchronous as HOLD. */
export const HOLD_MANY: NamedStatement = {
  name: 'svc_wallet_hold_many_async',
  text: `WITH ${ASYNC_COMMIT}
         SELECT m.idx, m.hold_id FROM async_commit, ${HOLD_MANY_CALL} AS m`,
};

/**
 * Many holds inside the caller's transaction (a batch of task creations): durable, as that
 * transaction commits, since a creation answers only once its row is durable (HOLD_MANY's
 * asynchronous commit would have covered the whole creation transaction).
 */
const HOLD_MANY_IN_TRANSACTION: NamedStatement = {
  name: 'svc_wallet_hold_many_in_transaction',
  text: `SELECT idx, hold_id FROM ${HOLD_MANY_CALL}`,
};

/** Many settlements / releases in one call and one commit, each by svc_resolve_hold. */
export const RESOLVE_MANY: NamedStatement = {
  name: 'svc_wallet_resolve_many',
  text: `SELECT m.idx, m.known, m.status, m.amount_micros, m.captured_micros, m.uncollected_micros, m.changed,
                (SELECT h.subject_type FROM hold h WHERE h.id = ($1::uuid[])[m.idx]) AS subject_type
         FROM svc_resolve_many($1::uuid[], $2::bigint[], $3::text[]) AS m`,
};

/** Most requests one batched call carries (group commit). */
export const WALLET_MAX_BATCH = 64;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BIGINT_MAX = 2n ** 63n - 1n;

/** The single-statement parameters of a hold (HOLD's $1…$7). */
type HoldValues = [workspaceId: string, environment: string, amount: string, holdId: string, apiKeyId: string | null, subjectType: string, subjectId: string];
/** The single-call parameters of a resolution (RESOLVE's $1…$3). */
type ResolveValues = [holdId: string, measured: string, status: 'settled' | 'released'];

interface ResolveRow {
  status: HoldStatus;
  amount_micros: string;
  captured_micros: string;
  uncollected_micros: string;
  changed: boolean;
  subject_type?: string | null;
}

/**
 * An error of the data itself (SQLSTATE class 22 data exception, 23 integrity violation): the
 * batch's transaction was rolled back because of some item, so each item can be retried alone
 * and get exactly what the single call gives it. Any other failure (connection lost, deadlock,
 * cancel) reaches every waiter of the batch.
 */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/** Fits the batch function's typed arrays; anything else takes the single statement. */
function batchableHold([workspaceId, environment, amount, holdId, apiKeyId, subjectType, subjectId]: HoldValues): boolean {
  const micros = BigInt(amount);
  return (
    UUID.test(workspaceId) &&
    UUID.test(holdId) &&
    (apiKeyId === null || (typeof apiKeyId === 'string' && UUID.test(apiKeyId))) &&
    (environment === 'live' || environment === 'test') &&
    micros > 0n &&
    micros <= BIGINT_MAX &&
    typeof subjectType === 'string' &&
    typeof subjectId === 'string'
  );
}

function batchableResolve([holdId, measured, status]: ResolveValues): boolean {
  const micros = BigInt(measured);
  return typeof holdId === 'string' && UUID.test(holdId) && micros >= 0n && micros <= BIGINT_MAX && (status === 'settled' || status === 'released');
}

/** The rows of a batch function, checked to be one per item in item order (`idx` 1…n). */
function inOrder<T extends { idx: number }>(rows: T[], count: number, fn: string): T[] {
  if (rows.length !== count || rows.some((row, k) => Number(row.idx) !== k + 1)) {
    throw new Error(`${fn} answered ${rows.length} rows out of order or for ${count} items`);
  }
  return rows;
}

function toResolution(row: ResolveRow | undefined, subjectType: string | null = row?.subject_type ?? null): ResolvedHold | null {
  if (!row) return null;
  return {
    status: row.status,
    amountMicros: BigInt(row.amount_micros),
    capturedMicros: BigInt(row.captured_micros),
    uncollectedMicros: BigInt(row.uncollected_micros),
    changed: row.changed,
    subjectType,
  };
}

/**
 * The wallet's SQL, written by hand: each operation is one round trip (DESIGN §5).
 *
 * Holds made on the pool (no caller transaction) and resolutions go through a group commit:
 * while one call is in flight, further requests wait in memory and then go together in one call
 * (svc_hold_many / svc_resolve_many: one transaction, one commit, the wallet rows locked once).
 * A request that goes alone (GroupCommit: nothing in flight, and none arriving with it) takes the
 * single statement, as before.
 */
@Injectable()
export class WalletRepository {
  private readonly holds = new GroupCommit<HoldValues, string | null>((batch) => this.holdBatch(batch), WALLET_MAX_BATCH);
  private readonly resolutions = new GroupCommit<ResolveValues, ResolvedHold | null>((batch) => this.resolveBatch(batch), WALLET_MAX_BATCH);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Database calls made by the group commits and the requests they carried (tests, metrics). */
  batchCounters(): { holds: { calls: number; items: number; largest: number }; resolutions: { calls: number; items: number; largest: number } } {
    return { holds: this.holds.counters(), resolutions: this.resolutions.counters() };
  }

  async figures(workspaceId: string, environment: KeyEnvironment): Promise<WalletFigures> {
    const rows: Array<{ balance_micros: string; held_micros: string }> = await this.db.query(
      'SELECT balance_micros, held_micros FROM wallet WHERE workspace_id = $1 AND environment = $2',
      [workspaceId, environment],
    );
    const row = rows[0];
    return { balanceMicros: BigInt(row?.balance_micros ?? 0), heldMicros: BigInt(row?.held_micros ?? 0) };
  }

  /** Both wallets of many workspaces in one query (admin lists); a workspace without a wallet row is absent. */
  async figuresOf(workspaceIds: string[]): Promise<Array<WalletFigures & { workspaceId: string; environment: KeyEnvironment }>> {
    if (workspaceIds.length === 0) return [];
    const rows: Array<{ workspace_id: string; environment: KeyEnvironment; balance_micros: string; held_micros: string }> = await this.db.query(
      'SELECT workspace_id, environment, balance_micros, held_micros FROM wallet WHERE workspace_id = ANY($1::uuid[])',
      [workspaceIds],
    );
    return rows.map((row) => ({
      workspaceId: row.workspace_id,
      environment: row.environment,
      balanceMicros: BigInt(row.balance_micros),
      heldMicros: BigInt(row.held_micros),
    }));
  }

  /**
   * Reserves `amountMicros` when the available balance covers it; returns the hold id, or null
   * when it does not. Wallet update, hold row and ledger entry happen in one statement; the
   * wallet row lock serialises concurrent holds, and the WHERE is re-checked after the wait.
   */
  async hold(holdId: string, input: HoldInput, tx?: TransactionHandle): Promise<string | null> {
    const values: HoldValues = [input.workspaceId, input.environment, input.amountMicros.toString(), holdId, input.apiKeyId, input.subjectType, input.subjectId];
    // Inside the caller's transaction: one statement on it. Otherwise the group commit.
    if (tx) {
      const rows = await namedQueryIn<{ hold_id: string }>(tx, HOLD_IN_TRANSACTION, values);
      return rows[0]?.hold_id ?? null;
    }
    return this.holds.submit(values);
  }

  /**
   * Several holds in the caller's transaction, judged in the given order exactly as `hold` one
   * after another would be (svc_hold_many): the hold id of each, or null where the available
   * balance did not cover it. Every wallet concerned stays locked until `tx` ends.
   */
  async holdMany(tx: TransactionHandle, holds: Array<{ holdId: string; input: HoldInput }>): Promise<Array<string | null>> {
    if (holds.length === 0) return [];
    const column = <T>(pick: (hold: { holdId: string; input: HoldInput }) => T): T[] => holds.map(pick);
    const rows = await namedQueryIn<{ idx: number; hold_id: string | null }>(tx, HOLD_MANY_IN_TRANSACTION, [
      column((h) => h.holdId),
      column((h) => h.input.workspaceId),
      column((h) => h.input.environment),
      column((h) => h.input.apiKeyId),
      column((h) => h.input.amountMicros.toString()),
      column((h) => h.input.subjectType),
      column((h) => h.input.subjectId),
    ]);
    return inOrder(rows, holds.length, 'svc_hold_many').map((row) => row.hold_id ?? null);
  }

  /** Whether a hold with this id was made (after a lost connection: did the lost try commit?). */
  async holdExists(holdId: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query('SELECT 1 FROM hold WHERE id = $1', [holdId]);
    return rows.length > 0;
  }

  /** Settles or releases a hold; null when there is no such hold. */
  resolve(holdId: string, measuredMicros: bigint, status: 'settled' | 'released'): Promise<ResolvedHold | null> {
    return this.resolutions.submit([holdId, measuredMicros.toString(), status]);
  }

  /**
   * Settles or releases a hold the database does not have — its asynchronous commit was lost in a
   * crash — from the hold's input: writes it back resolved, and for a settlement charges the
   * measured cost capped at the hold and at the available balance with one `adjust` entry. A
   * hold that exists after all is resolved as usual. Null when the wallet does not exist.
   */
  async chargeLostHold(holdId: string, input: HoldInput, measuredMicros: bigint, status: 'settled' | 'released'): Promise<ResolvedHold | null> {
    const rows: ResolveRow[] = await this.db.query(CHARGE_LOST_HOLD, [
      holdId,
      input.workspaceId,
      input.environment,
      input.apiKeyId,
      input.amountMicros.toString(),
      input.subjectType,
      input.subjectId,
      measuredMicros.toString(),
      status,
    ]);
    return toResolution(rows[0], input.subjectType);
  }

  /** One hold alone: the single statement, a named statement on the pool. */
  private async holdOne(values: HoldValues): Promise<string | null> {
    const rows = await this.named<{ hold_id: string }>(HOLD, values);
    return rows[0]?.hold_id ?? null;
  }

  private async resolveOne(values: ResolveValues): Promise<ResolvedHold | null> {
    return toResolution((await this.named<ResolveRow>(RESOLVE, values))[0]);
  }

  /** A batch of the hold group commit: one item alone as before, several in one svc_hold_many call. */
  private holdBatch(batch: HoldValues[]): Promise<Array<string | null | Promise<string | null>>> {
    return this.runBatch(batch, batchableHold, (values) => this.holdOne(values), async (items) => {
      const column = (k: number) => items.map((values) => values[k]);
      const rows = await this.named<{ idx: number; hold_id: string | null }>(HOLD_MANY, [column(3), column(0), column(1), column(4), column(2), column(5), column(6)]);
      return inOrder(rows, items.length, 'svc_hold_many').map((row) => row.hold_id ?? null);
    });
  }

  /** A batch of the resolution group commit: svc_resolve_many applies svc_resolve_hold per item. */
  private resolveBatch(batch: ResolveValues[]): Promise<Array<ResolvedHold | null | Promise<ResolvedHold | null>>> {
    return this.runBatch(batch, batchableResolve, (values) => this.resolveOne(values), async (items) => {
      const column = (k: number) => items.map((values) => values[k]);
      const rows = await this.named<ResolveRow & { idx: number; known: boolean }>(RESOLVE_MANY, [column(0), column(1), column(2)]);
      return inOrder(rows, items.length, 'svc_resolve_many').map((row) => (row.known ? toResolution(row) : null));
    });
  }

  /**
   * One batch: a lone item takes the single statement (as before group commit); several go in
   * one call of `many`. Items `many` cannot carry (see `batchable`) go alone, started only once
   * the batch call is done, so that when it fails they share its error with nothing of theirs
   * made. When it fails on the data (isDataError), nothing was made either: every item is retried
   * alone and gets exactly the result or error the single call gives it.
   */
  private async runBatch<V, O>(batch: V[], batchable: (values: V) => boolean, one: (values: V) => Promise<O>, many: (items: V[]) => Promise<O[]>): Promise<Array<O | Promise<O>>> {
    if (batch.length === 1) return [await one(batch[0]!)];
    const results: Array<O | Promise<O>> = new Array(batch.length);
    const grouped = batch.flatMap((values, i) => (batchable(values) ? [i] : []));
    if (grouped.length === 1) results[grouped[0]!] = await one(batch[grouped[0]!]!);
    else if (grouped.length > 1) {
      try {
        const answers = await many(grouped.map((i) => batch[i]!));
        grouped.forEach((i, k) => (results[i] = answers[k]!));
      } catch (error) {
        if (!isDataError(error)) throw error;
        for (const i of grouped) results[i] = one(batch[i]!);
      }
    }
    batch.forEach((values, i) => {
      if (!(i in results)) results[i] = one(values);
    });
    return results;
  }

  /** The hold and the settlement run on every text request: named statements (namedQuery). */
  private named<T>(statement: NamedStatement, values: unknown[]): Promise<T[]> {
    return namedQuery<T>(this.db, statement, values);
  }

  async credit(workspaceId: string, environment: KeyEnvironment, amountMicros: bigint, reference: string): Promise<{ applied: boolean; recordedMicros: bigint }> {
    const rows: Array<{ applied: boolean; recorded_amount: string }> = await this.db.query('SELECT * FROM svc_credit($1, $2, $3, $4)', [
      workspaceId,
      environment,
      amountMicros.toString(),
      reference,
    ]);
    return { applied: rows[0]!.applied, recordedMicros: BigInt(rows[0]!.recorded_amount) };
  }

  /** Newest first, across both environments unless one is given; `limit + 1` rows. */
  listLedger(workspaceId: string, limit: number, beforeId?: bigint, filter: LedgerFilter = {}): Promise<LedgerEntryEntity[]> {
    const query = this.db.manager
      .createQueryBuilder(LedgerEntryEntity, 'e')
      .where('e.workspace_id = :workspaceId', { workspaceId })
      .orderBy('e.id', 'DESC')
      .limit(limit + 1);
    if (filter.environment) query.andWhere('e.environment = :environment', { environment: filter.environment });
    if (filter.kind) query.andWhere('e.kind = :kind', { kind: filter.kind });
    if (filter.subjectId) query.andWhere('e.subject_id = :subjectId', { subjectId: filter.subjectId });
    if (filter.subjectType) query.andWhere('e.subject_type = :subjectType', { subjectType: filter.subjectType });
    if (beforeId !== undefined) query.andWhere('e.id < :beforeId', { beforeId: beforeId.toString() });
    return query.getMany();
  }

  /**
   * Ids of the open holds of one subject type made before `cutoff`, oldest first (at most
   * `limit`): the holds a crashed process left behind.
   */
  async openHoldsBefore(subjectType: string, cutoff: Date, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT id FROM hold WHERE status = 'open' AND subject_type = $1 AND created_at < $2 ORDER BY created_at LIMIT $3`,
      [subjectType, cutoff, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Holds by id (the task detail's holds, found through its ledger entries). */
  holdsByIds(ids: string[]): Promise<HoldEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.manager.getRepository(HoldEntity).find({ where: { id: In(ids) }, order: { createdAt: 'ASC' } });
  }

  /** Open holds (count and total) for the metrics gauge. */
  async openHolds(): Promise<{ count: number; micros: bigint }> {
    const rows: Array<{ count: string; micros: string | null }> = await this.db.query(
      `SELECT count(*) AS count, sum(amount_micros) AS micros FROM hold WHERE status = 'open'`,
    );
    return { count: Number(rows[0]?.count ?? 0), micros: BigInt(rows[0]?.micros ?? 0) };
  }
}
