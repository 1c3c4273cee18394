import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import { RealtimeSessionEntity, RealtimeTicketEntity, RealtimeTurnEntity } from './realtime-session.entity.js';

/** Namespace of the per-key creation lock (first argument of pg_advisory_xact_lock(int, int)). */
const SESSION_LOCK_CLASS = 0x7274736e; // "rtsn"

export type CreateOutcome = { kind: 'created' } | { kind: 'limit_reached' };

/** Why a turn's allocation was refused (nothing was written). */
export type AllocationRefusal = 'budget_exhausted' | 'session_closed';

export class AllocationRefused extends Error {
  constructor(
    readonly reason: AllocationRefusal,
    readonly remainingMicros: bigint,
  ) {
    super(reason);
  }
}

/**
 * `realtime_session`, `realtime_ticket`, `realtime_turn`. Reads on behalf of a client take the
 * owning API key id; the gateway's reads act on a session its ticket proved.
 */
@Injectable()
export class RealtimeSessionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts the session and its first ticket under a per-key advisory lock, so the limit of open
   * sessions holds under concurrent creations of one key.
   */
  createWithinLimit(session: RealtimeSessionEntity, ticket: RealtimeTicketEntity, limit: number, now: Date): Promise<CreateOutcome> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SESSION_LOCK_CLASS, session.apiKeyId]);
      const [{ open }] = (await tx.query(
        `SELECT count(*)::int AS open FROM realtime_session WHERE api_key_id = $1 AND closed_at IS NULL AND expires_at > $2`,
        [session.apiKeyId, now],
      )) as Array<{ open: number }>;
      if (open >= limit) return { kind: 'limit_reached' };
      await tx.getRepository(RealtimeSessionEntity).insert(session);
      await tx.getRepository(RealtimeTicketEntity).insert(ticket);
      return { kind: 'created' };
    });
  }

  findOwned(apiKeyId: string, id: string): Promise<RealtimeSessionEntity | null> {
    return this.db.getRepository(RealtimeSessionEntity).findOneBy({ id, apiKeyId });
  }

  find(id: string): Promise<RealtimeSessionEntity | null> {
    return this.db.getRepository(RealtimeSessionEntity).findOneBy({ id });
  }

  /**
   * A new ticket for an open session of the key, replacing every earlier ticket of the session (an
   * unused one stops working), so a session holds one ticket row at most. False when the session
   * is closed or expired.
   */
  replaceTicket(apiKeyId: string, ticket: RealtimeTicketEntity, now: Date): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const open = (await tx.query(
        `SELECT id FROM realtime_session WHERE id = $1 AND api_key_id = $2 AND closed_at IS NULL AND expires_at > $3 FOR UPDATE`,
        [ticket.sessionId, apiKeyId, now],
      )) as unknown[];
      if (open.length === 0) return false;
      await tx.query(`DELETE FROM realtime_ticket WHERE session_id = $1`, [ticket.sessionId]);
      await tx.getRepository(RealtimeTicketEntity).insert(ticket);
      return true;
    });
  }

  /**
   * Uses the ticket: one statement, so of two connections racing for one ticket exactly one gets
   * the session. Only an unused, unexpired ticket of this very session, whose session is open,
   * is used; any other ticket is left as it was. The session, or null.
   */
  async consumeTicket(tokenHash: Buffer, sessionId: string, now: Date): Promise<RealtimeSessionEntity | null> {
    const rows = (await this.db.query(
      `UPDATE realtime_ticket t SET used_at = $3
         FROM realtime_session s
        WHERE t.token_hash = $1 AND t.session_id = $2 AND t.used_at IS NULL AND t.expires_at > $3
          AND s.id = t.session_id AND s.closed_at IS NULL AND s.expires_at > $3
        RETURNING s.id`,
      [tokenHash, sessionId, now],
    )) as [Array<{ id: string }>, number];
    const used = rows[0]?.[0];
    return used ? this.find(used.id) : null;
  }

  /**
   * Whether `tokenHash` is a good ticket of this session (unused, unexpired) and only the session
   * has ended (closed by DELETE): its holder learns to create a new session, not to ask for another
   * ticket. A used or expired ticket stays DESIGN's 4401; a token that is no ticket learns nothing.
   */
  async endedSessionOfTicket(tokenHash: Buffer, sessionId: string, now: Date): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM realtime_ticket t JOIN realtime_session s ON s.id = t.session_id
        WHERE t.token_hash = $1 AND t.session_id = $2 AND t.used_at IS NULL AND t.expires_at > $3
          AND (s.closed_at IS NOT NULL OR s.expires_at <= $3)`,
      [tokenHash, sessionId, now],
    );
    return rows.length > 0;
  }

  /** Closes the key's open session; the session as it is now (closed, or as it was when not open), or null when not the key's. */
  async closeOwned(apiKeyId: string, id: string, now: Date): Promise<RealtimeSessionEntity | null> {
    await this.db.query(
      `UPDATE realtime_session SET closed_at = $3, updated_at = $3 WHERE id = $1 AND api_key_id = $2 AND closed_at IS NULL AND expires_at > $3`,
      [id, apiKeyId, now],
    );
    return this.findOwned(apiKeyId, id);
  }

  findTurn(sessionId: string, turnId: string): Promise<RealtimeTurnEntity | null> {
    return this.db.getRepository(RealtimeTurnEntity).findOneBy({ sessionId, turnId });
  }

  /** The session's most recent turn (a session has few: its budget and 50 minutes bound them). */
  lastTurn(sessionId: string): Promise<RealtimeTurnEntity | null> {
    return this.db.getRepository(RealtimeTurnEntity).findOne({ where: { sessionId }, order: { createdAt: 'DESC' } });
  }

  /**
   * In the turn's task creation transaction: allocates the estimate from the session budget (only
   * if it fits and the session is open) and records the turn. Throws AllocationRefused (the
   * transaction rolls back: no hold, no task); a turn id recorded meanwhile violates the key.
   */
  async allocateTurn(tx: TransactionHandle, turn: RealtimeTurnEntity, now: Date): Promise<void> {
    const manager = entityManagerOf(tx);
    const [rows] = (await manager.query(
      `UPDATE realtime_session SET allocated_micros = allocated_micros + $2, updated_at = $3
        WHERE id = $1 AND closed_at IS NULL AND expires_at > $3 AND allocated_micros + $2 <= max_cost_micros
        RETURNING id`,
      [turn.sessionId, turn.estimatedMicros.toString(), now],
    )) as [unknown[], number];
    if (rows.length === 0) {
      const [state] = (await manager.query(
        `SELECT (closed_at IS NOT NULL OR expires_at <= $2) AS ended, max_cost_micros - allocated_micros AS remaining FROM realtime_session WHERE id = $1`,
        [turn.sessionId, now],
      )) as Array<{ ended: boolean; remaining: string }>;
      throw new AllocationRefused(!state || state.ended ? 'session_closed' : 'budget_exhausted', BigInt(state?.remaining ?? 0));
    }
    await manager.getRepository(RealtimeTurnEntity).insert(turn);
  }
}

/** A unique-key violation (PostgreSQL 23505), as TypeORM reports it. */
export function isUniqueViolation(error: unknown): boolean {
  const driver = (error as { driverError?: { code?: string }; code?: string } | null) ?? null;
  return driver?.driverError?.code === '23505' || driver?.code === '23505';
}
