import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock, type CursorPosition, GroupCommit } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { namedQuery, type NamedStatement } from '../../database/named-query.js';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import { RETRY_WINDOW_MS } from './retry-schedule.js';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from './webhook-delivery.types.js';

type GroupCommitCounters = ReturnType<GroupCommit<unknown, unknown>['counters']>;

/** One recorded attempt of a delivery. */
export interface DeliveryAttemptRow {
  attempt: number;
  manual: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}
import type { WebhookEventType } from './webhook-events.js';

export interface NewWebhookEvent {
  eventId: string;
  deliveryId: string;
  type: WebhookEventType;
  taskId: string;
  endpointId: string;
  apiKeyId: string;
  /** The exact bytes every attempt sends. */
  payload: string;
  at: Date;
}

/** One finished attempt and what it leaves on the delivery. */
export interface AttemptRecord {
  attempt: number;
  manual: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  status: WebhookDeliveryStatus;
  nextAttemptAt: Date | null;
  at: Date;
}

export interface DeliveryPageFilter {
  limit: number;
  after?: CursorPosition;
  status?: WebhookDeliveryStatus;
}

const SELECT_DELIVERY = `
  SELECT d.id, d.event_id, e.type AS event_type, e.created_at AS event_created_at, d.endpoint_id, d.api_key_id,
         d.status, d.attempts, d.next_attempt_at, d.claimed_until, d.manual, d.last_status_code, d.last_error,
         d.created_at, d.updated_at
    FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id`;

/** Deliveries claimed, and attempts recorded, in one statement at most (the worker's group commits). */
const WORKER_MAX_BATCH = 64;
/** A claim outlives the attempt's own timeout by this much before another run may take over. */
export const CLAIM_GRACE_MS = 10_000;

/**
 * The worker's one read and claim (claimBatch). `claimable` locks, in id order, the rows that can
 * have an attempt now, skipping those another statement holds; `claimed` takes their next attempt.
 * The final SELECT sees the rows as they were before (one snapshot) beside the claimed attempt, and
 * gives the payload, URL and sealed secret only for claimed rows.
 */
const CLAIM_MANY: NamedStatement = {
  name: 'webhook_claim_many',
  text: `
    WITH claimable AS (
      SELECT d.id FROM webhook_delivery d
        JOIN webhook_event e ON e.id = d.event_id
        JOIN webhook_endpoint p ON p.id = d.endpoint_id
       WHERE d.id = ANY($1::text[]) AND d.status = 'pending' AND d.next_attempt_at <= $2::timestamptz
         AND (d.claimed_until IS NULL OR d.claimed_until <= $2::timestamptz)
         AND p.enabled AND (d.manual OR e.created_at > $4::timestamptz)
       ORDER BY d.id
       FOR UPDATE OF d SKIP LOCKED),
    claimed AS (
      UPDATE webhook_delivery d SET attempts = d.attempts + 1, claimed_until = $3::timestamptz, updated_at = $2::timestamptz
        FROM claimable c WHERE d.id = c.id
      RETURNING d.id, d.attempts)
    SELECT d.id, d.event_id, e.type AS event_type, e.created_at AS event_created_at, d.endpoint_id, d.api_key_id,
           d.status, d.attempts, d.next_attempt_at, d.claimed_until, d.manual, d.last_status_code, d.last_error,
           d.created_at, d.updated_at, p.enabled AS endpoint_enabled, c.attempts AS claimed_attempt,
           CASE WHEN c.id IS NOT NULL THEN e.payload END AS payload,
           CASE WHEN c.id IS NOT NULL THEN p.url END AS url,
           CASE WHEN c.id IS NOT NULL THEN p.secret_sealed END AS secret_sealed
      FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id
      LEFT JOIN webhook_endpoint p ON p.id = d.endpoint_id
      LEFT JOIN claimed c ON c.id = d.id
     WHERE d.id = ANY($1::text[])`,
};

/**
 * The worker's record of attempts (recordBatch): each row's outcome and its attempt row, only where
 * the delivery still holds that attempt's claim. The rows are locked in id order first, so two
 * batches that share rows (a claim taken over after it expired) cannot deadlock.
 */
const RECORD_MANY: NamedStatement = {
  name: 'webhook_record_many',
  text: `
    WITH input AS (
      SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[], $8::bool[], $9::timestamptz[], $10::int[])
        AS i(id, attempt, status, next_attempt_at, status_code, error, at, manual, started_at, duration_ms)),
    locked AS (
      SELECT d.id FROM webhook_delivery d WHERE d.id IN (SELECT id FROM input) ORDER BY d.id FOR UPDATE),
    ended AS (
      UPDATE webhook_delivery d
         SET status = i.status, next_attempt_at = i.next_attempt_at, claimed_until = NULL,
             manual = CASE WHEN i.status = 'pending' THEN d.manual ELSE false END,
             last_status_code = i.status_code, last_error = i.error, updated_at = i.at
        FROM input i JOIN locked l ON l.id = i.id
       WHERE d.id = i.id AND d.attempts = i.attempt AND d.status = 'pending' AND d.claimed_until IS NOT NULL
      RETURNING i.id, i.attempt, i.manual, i.started_at, i.duration_ms, i.status_code, i.error)
    INSERT INTO webhook_delivery_attempt (delivery_id, attempt, manual, started_at, duration_ms, status_code, error)
    SELECT id, attempt, manual, started_at, duration_ms, status_code, error FROM ended
    ON CONFLICT DO NOTHING RETURNING delivery_id, attempt`,
};

interface DeliverySqlRow {
  id: string;
  event_id: string;
  event_type: WebhookEventType;
  event_created_at: Date;
  endpoint_id: string;
  api_key_id: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  claimed_until: Date | null;
  manual: boolean;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** TypeORM answers an UPDATE … RETURNING as `[rows, affected]` (other statements as rows). */
function returned<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}

interface ClaimSqlRow extends DeliverySqlRow {
  endpoint_enabled: boolean | null;
  claimed_attempt: number | null;
  payload: string | null;
  url: string | null;
  secret_sealed: string | null;
}

/**
 * What a claim came to. `claimed`: attempt number `attempt` is this run's to make, with the exact
 * payload bytes, the endpoint's URL and its sealed secret. `unclaimed`: the delivery as it stood
 * (null when there is no such delivery) and whether its endpoint is enabled (null when it is gone).
 */
export type DeliveryClaim =
  | { kind: 'claimed'; delivery: WebhookDeliveryRow; attempt: number; payload: string; url: string; secretSealed: string }
  | { kind: 'unclaimed'; delivery: WebhookDeliveryRow | null; endpointEnabled: boolean | null };

function toClaim(row: ClaimSqlRow | undefined): DeliveryClaim {
  if (!row) return { kind: 'unclaimed', delivery: null, endpointEnabled: null };
  if (row.claimed_attempt === null || row.payload === null || row.url === null || row.secret_sealed === null) {
    return { kind: 'unclaimed', delivery: toRow(row), endpointEnabled: row.endpoint_enabled };
  }
  const delivery = { ...toRow(row), attempts: row.claimed_attempt };
  return { kind: 'claimed', delivery, attempt: row.claimed_attempt, payload: row.payload, url: row.url, secretSealed: row.secret_sealed };
}

const toRow = (r: DeliverySqlRow): WebhookDeliveryRow => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.event_type,
  eventCreatedAt: r.event_created_at,
  endpointId: r.endpoint_id,
  apiKeyId: r.api_key_id,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  claimedUntil: r.claimed_until,
  manual: r.manual,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * Every SQL statement of webhook events and deliveries. Worker updates are compare-and-set on the
 * delivery's state (status, claim, attempt number), so a duplicate job never sends or records twice.
 */
@Injectable()
export class WebhookDeliveryRepository {
  private readonly claims: GroupCommit<string, DeliveryClaim>;
  private readonly records = new GroupCommit<AttemptRecord & { id: string }, boolean>((batch) => this.recordBatch(batch), WORKER_MAX_BATCH);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    // The batch's clock reading is every item's claim time (they were all asked for just now).
    this.claims = new GroupCommit((ids) => {
      const now = this.clock.now();
      const until = new Date(now.getTime() + this.config.env.WEBHOOK_DELIVERY_TIMEOUT_MS + CLAIM_GRACE_MS);
      return this.claimBatch(ids, now, until, new Date(now.getTime() - RETRY_WINDOW_MS));
    }, WORKER_MAX_BATCH);
  }

  /**
   * The outbox write, inside the task's terminal transaction: the event (unique per task and type)
   * and its delivery. Answers false when the event already existed (nothing written).
   */
  async insertOutbox(tx: TransactionHandle, event: NewWebhookEvent): Promise<boolean> {
    const manager = entityManagerOf(tx);
    const inserted: unknown[] = await manager.query(
      `INSERT INTO webhook_event (id, type, task_id, endpoint_id, api_key_id, payload, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (task_id, type) DO NOTHING RETURNING id`,
      [event.eventId, event.type, event.taskId, event.endpointId, event.apiKeyId, event.payload, event.at],
    );
    if (inserted.length === 0) return false;
    await manager.query(
      `INSERT INTO webhook_delivery (id, event_id, endpoint_id, api_key_id, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $5)`,
      [event.deliveryId, event.eventId, event.endpointId, event.apiKeyId, event.at],
    );
    return true;
  }

  async findById(id: string): Promise<WebhookDeliveryRow | null> {
    const rows: DeliverySqlRow[] = await this.db.query(`${SELECT_DELIVERY} WHERE d.id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  async findOnEndpoint(endpointId: string, id: string): Promise<WebhookDeliveryRow | null> {
    const rows: DeliverySqlRow[] = await this.db.query(`${SELECT_DELIVERY} WHERE d.id = $1 AND d.endpoint_id = $2`, [id, endpointId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * Claims the next attempt of each delivery in `ids` that can have one now: pending, due,
   * unclaimed, its endpoint enabled, and inside the 24 h window (`windowStart`) unless the attempt
   * was asked for by hand. The claim lasts until `until` (a worker killed mid-send loses it then,
   * and the delivery is sent again). One statement for the whole batch: rows another statement
   * holds are skipped (SKIP LOCKED), never waited for, so a batch is not held up by one row.
   * Answers one result per id, in order: the claimed attempt with what the POST needs (payload,
   * URL, sealed secret, read in the same statement, so a rotation committed before it signs), or
   * the delivery as it stood (null when unknown) for the caller to judge.
   */
  async claimBatch(ids: string[], now: Date, until: Date, windowStart: Date): Promise<DeliveryClaim[]> {
    const rows = await namedQuery<ClaimSqlRow>(this.db, CLAIM_MANY, [ids, now, until, windowStart]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const handedOut = new Set<string>();
    return ids.map((id) => {
      const claim = toClaim(byId.get(id));
      if (claim.kind !== 'claimed') return claim;
      // One id twice in a batch (two runs of one delivery): the attempt is the first one's; the
      // other sees the delivery as it now is, claimed until `until`.
      if (handedOut.has(id)) return { kind: 'unclaimed', delivery: { ...claim.delivery, claimedUntil: until }, endpointEnabled: true };
      handedOut.add(id);
      return claim;
    });
  }

  /** One claim, through the group commit: concurrent calls share one claimBatch statement. */
  claim(id: string): Promise<DeliveryClaim> {
    return this.claims.submit(id);
  }

  /**
   * Records each attempt and its outcome together (one statement for the batch, so each is one
   * atomic write), only while the claim of that attempt still holds. Answers, per record in order,
   * false when another run took the delivery meanwhile (nothing written for it).
   */
  async recordBatch(records: Array<AttemptRecord & { id: string }>): Promise<boolean[]> {
    const column = <T>(pick: (record: AttemptRecord & { id: string }) => T): T[] => records.map(pick);
    const rows = await namedQuery<{ delivery_id: string; attempt: number }>(this.db, RECORD_MANY, [
      column((r) => r.id),
      column((r) => r.attempt),
      column((r) => r.status),
      column((r) => r.nextAttemptAt),
      column((r) => r.statusCode),
      column((r) => r.error),
      column((r) => r.at),
      column((r) => r.manual),
      column((r) => r.startedAt),
      column((r) => Math.round(r.durationMs)),
    ]);
    const written = new Set(rows.map((row) => `${row.delivery_id}#${row.attempt}`));
    return records.map((r) => written.has(`${r.id}#${r.attempt}`));
  }

  /** One record, through the group commit: concurrent calls share one recordBatch statement. */
  recordAttempt(id: string, record: AttemptRecord): Promise<boolean> {
    return this.records.submit({ ...record, id });
  }

  /** Statements made by the worker's group commits and the items they carried (tests, metrics). */
  batchCounters(): { claims: GroupCommitCounters; records: GroupCommitCounters } {
    return { claims: this.claims.counters(), records: this.records.counters() };
  }

  /** Ends a pending delivery without an attempt (endpoint disabled, retry window over). */
  async failPending(id: string, reason: string, at: Date): Promise<boolean> {
    const rows = returned(await this.db.query(
      `UPDATE webhook_delivery SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, manual = false, last_error = $2, updated_at = $3
        WHERE id = $1 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= $3) RETURNING id`,
      [id, reason, at],
    ));
    return rows.length > 0;
  }

  /**
   * Ends every pending delivery of an endpoint that was just disabled (no attempt), except one whose
   * attempt is in flight: that run records its outcome, and the next run finds the endpoint disabled.
   * Answers how many ended.
   */
  async failPendingOfEndpoint(endpointId: string, reason: string, at: Date): Promise<number> {
    const rows = returned(await this.db.query(
      `UPDATE webhook_delivery SET status = 'failed', next_attempt_at = NULL, claimed_until = NULL, manual = false, last_error = $2, updated_at = $3
        WHERE endpoint_id = $1 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until <= $3) RETURNING id`,
      [endpointId, reason, at],
    ));
    return rows.length;
  }

  /** A failed delivery gets one attempt now, asked for by hand (compare-and-set on `failed`). */
  async reopenByHand(id: string, at: Date): Promise<WebhookDeliveryRow | null> {
    const rows = returned(await this.db.query(
      `UPDATE webhook_delivery SET status = 'pending', manual = true, next_attempt_at = $2, claimed_until = NULL, updated_at = $2
        WHERE id = $1 AND status = 'failed' RETURNING id`,
      [id, at],
    ));
    return rows.length > 0 ? this.findById(id) : null;
  }

  /** One delivery's attempts, newest first, `limit + 1` rows, those numbered below `beforeAttempt` when given (admin). */
  async attempts(deliveryId: string, limit: number, beforeAttempt?: number): Promise<DeliveryAttemptRow[]> {
    const rows: Array<{ attempt: number; manual: boolean; started_at: Date; duration_ms: number; status_code: number | null; error: string | null }> = await this.db.query(
      `SELECT attempt, manual, started_at, duration_ms, status_code, error FROM webhook_delivery_attempt
        WHERE delivery_id = $1 AND ($2::int IS NULL OR attempt < $2::int) ORDER BY attempt DESC LIMIT $3`,
      [deliveryId, beforeAttempt ?? null, limit + 1],
    );
    return rows.map((r) => ({ attempt: r.attempt, manual: r.manual, startedAt: r.started_at, durationMs: r.duration_ms, statusCode: r.status_code, error: r.error }));
  }

  /** Newest first, `limit + 1` rows (the extra one says more exist); one endpoint, or all (admin). */
  async list(filter: DeliveryPageFilter, endpointId?: string): Promise<WebhookDeliveryRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (endpointId !== undefined) where.push(`d.endpoint_id = ${param(endpointId)}`);
    if (filter.status !== undefined) where.push(`d.status = ${param(filter.status)}`);
    if (filter.after !== undefined) where.push(`(d.created_at, d.id) < (${param(filter.after.createdAt)}, ${param(filter.after.id)})`);
    const sql = `${SELECT_DELIVERY} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY d.created_at DESC, d.id DESC LIMIT ${param(filter.limit + 1)}`;
    const rows: DeliverySqlRow[] = await this.db.query(sql, params);
    return rows.map(toRow);
  }

  /** Pending deliveries due before `horizon`, oldest first, at most `limit` (the reconciler's source). */
  async due(horizon: Date, limit: number): Promise<Array<{ id: string; endpointId: string }>> {
    const rows: Array<{ id: string; endpoint_id: string }> = await this.db.query(
      `SELECT id, endpoint_id FROM webhook_delivery WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2`,
      [horizon, limit],
    );
    return rows.map((r) => ({ id: r.id, endpointId: r.endpoint_id }));
  }

  /** Creation time of the oldest pending delivery (the metric of back-pressure). */
  async oldestPendingAt(): Promise<Date | null> {
    const rows: Array<{ at: Date | null }> = await this.db.query(`SELECT min(created_at) AS at FROM webhook_delivery WHERE status = 'pending'`);
    return rows[0]?.at ?? null;
  }
}
