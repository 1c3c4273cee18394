import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { entityManagerOf, type TransactionHandle } from '../../database/transaction.js';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from './webhook-delivery.types.js';

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

/** The worker's read: the delivery and the payload bytes it sends, in one round trip. */
const SELECT_DELIVERY_WITH_PAYLOAD = SELECT_DELIVERY.replace('d.created_at, d.updated_at', 'd.created_at, d.updated_at, e.payload');

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
  constructor(@InjectDataSource() private readonly db: DataSource) {}

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

  /** The worker's read (the job carries only the id): the delivery with its event's payload bytes. */
  async findWithPayload(id: string): Promise<(WebhookDeliveryRow & { payload: string }) | null> {
    const rows: Array<DeliverySqlRow & { payload: string }> = await this.db.query(`${SELECT_DELIVERY_WITH_PAYLOAD} WHERE d.id = $1`, [id]);
    return rows[0] ? { ...toRow(rows[0]), payload: rows[0].payload } : null;
  }

  /**
   * Claims the next attempt: only a pending, due, unclaimed delivery; the claim lasts until
   * `until` (a worker killed mid-send loses it then, and the delivery is sent again). Answers the
   * attempt number, or null when another run has it or it is not due.
   */
  async claim(id: string, now: Date, until: Date): Promise<number | null> {
    const rows = returned<{ attempts: number }>(
      await this.db.query(
      `UPDATE webhook_delivery SET attempts = attempts + 1, claimed_until = $3, updated_at = $2
        WHERE id = $1 AND status = 'pending' AND next_attempt_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2)
        RETURNING attempts`,
      [id, now, until],
    ));
    return rows[0]?.attempts ?? null;
  }

  /**
   * Records the attempt and its outcome together (one statement, so one atomic write), only while
   * the claim of that attempt still holds. False when another run took the delivery meanwhile.
   */
  async recordAttempt(id: string, record: AttemptRecord): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `WITH ended AS (
         UPDATE webhook_delivery
            SET status = $3::text, next_attempt_at = $4::timestamptz, claimed_until = NULL,
                manual = CASE WHEN $3::text = 'pending' THEN manual ELSE false END,
                last_status_code = $5::int, last_error = $6::text, updated_at = $7::timestamptz
          WHERE id = $1 AND attempts = $2 AND status = 'pending' AND claimed_until IS NOT NULL
          RETURNING id)
       INSERT INTO webhook_delivery_attempt (delivery_id, attempt, manual, started_at, duration_ms, status_code, error)
       SELECT id, $2, $8, $9, $10, $5::int, $6::text FROM ended
       ON CONFLICT DO NOTHING RETURNING delivery_id`,
      [id, record.attempt, record.status, record.nextAttemptAt, record.statusCode, record.error, record.at, record.manual, record.startedAt, Math.round(record.durationMs)],
    );
    return rows.length > 0;
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
