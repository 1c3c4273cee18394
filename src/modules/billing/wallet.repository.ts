import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import type { KeyEnvironment } from '../identity/api-key.entity.js';
import type { HoldStatus } from './hold.entity.js';
import { LedgerEntryEntity } from './ledger-entry.entity.js';

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

/** The hold statement (see `hold`): no row when the available balance does not cover `$3`. */
const HOLD = {
  name: 'svc_wallet_hold',
  text: `WITH w AS (
         UPDATE wallet SET held_micros = held_micros + $3, version = version + 1, updated_at = now()
         WHERE workspace_id = $1 AND environment = $2 AND balance_micros - held_micros >= $3
         RETURNING workspace_id, environment
       ), h AS (
         INSERT INTO hold (id, workspace_id, environment, api_key_id, amount_micros, subject_type, subject_id)
         SELECT $4, workspace_id, environment, $5, $3, $6, $7 FROM w
         RETURNING id, workspace_id, environment, amount_micros, subject_type, subject_id
       )
       INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
       SELECT workspace_id, environment, 'hold', amount_micros, 0, amount_micros, id, subject_type, subject_id FROM h
       RETURNING hold_id`,
};

const RESOLVE = { name: 'svc_wallet_resolve_hold', text: 'SELECT * FROM svc_resolve_hold($1, $2, $3)' };

/** The wallet's SQL, written by hand: each operation is one round trip (DESIGN §5). */
@Injectable()
export class WalletRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

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
  async hold(input: HoldInput, manager?: EntityManager): Promise<string | null> {
    const values = [input.workspaceId, input.environment, input.amountMicros.toString(), randomUUID(), input.apiKeyId, input.subjectType, input.subjectId];
    // Inside the caller's transaction: its manager. Otherwise a named statement on the pool.
    const rows: Array<{ hold_id: string }> = manager ? await manager.query(HOLD.text, values) : await this.named(HOLD, values);
    return rows[0]?.hold_id ?? null;
  }

  async resolve(holdId: string, measuredMicros: bigint, status: 'settled' | 'released'): Promise<HoldResolution | null> {
    const rows: Array<{ status: HoldStatus; amount_micros: string; captured_micros: string; uncollected_micros: string; changed: boolean }> =
      await this.named(RESOLVE, [holdId, measuredMicros.toString(), status]);
    const row = rows[0];
    if (!row) return null;
    return {
      status: row.status,
      amountMicros: BigInt(row.amount_micros),
      capturedMicros: BigInt(row.captured_micros),
      uncollectedMicros: BigInt(row.uncollected_micros),
      changed: row.changed,
    };
  }

  /**
   * A named statement on the pg pool under TypeORM: parsed and planned once per connection
   * instead of on every call (the hold and the settlement run on every text request; see
   * docs/benchmarks.md › Text). Same connections, same type parsing as `db.query`.
   */
  private async named<T>(statement: { name: string; text: string }, values: unknown[]): Promise<T[]> {
    const pool = (this.db.driver as unknown as { master?: { query?: unknown } }).master;
    if (typeof pool?.query !== 'function') return this.db.query(statement.text, values);
    const result = await (pool as { query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: T[] }> }).query({ ...statement, values });
    return result.rows;
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
  listLedger(workspaceId: string, limit: number, beforeId?: bigint, environment?: KeyEnvironment): Promise<LedgerEntryEntity[]> {
    const query = this.db.manager
      .createQueryBuilder(LedgerEntryEntity, 'e')
      .where('e.workspace_id = :workspaceId', { workspaceId })
      .orderBy('e.id', 'DESC')
      .limit(limit + 1);
    if (environment) query.andWhere('e.environment = :environment', { environment });
    if (beforeId !== undefined) query.andWhere('e.id < :beforeId', { beforeId: beforeId.toString() });
    return query.getMany();
  }

  /** Open holds (count and total) for the metrics gauge. */
  async openHolds(): Promise<{ count: number; micros: bigint }> {
    const rows: Array<{ count: string; micros: string | null }> = await this.db.query(
      `SELECT count(*) AS count, sum(amount_micros) AS micros FROM hold WHERE status = 'open'`,
    );
    return { count: Number(rows[0]?.count ?? 0), micros: BigInt(rows[0]?.micros ?? 0) };
  }
}
