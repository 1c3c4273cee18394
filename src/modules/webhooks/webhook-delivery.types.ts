import type { WebhookEventType } from './webhook-events.js';

/** DESIGN §10: `pending` until it succeeds, or fails for good (or until a manual retry). */
export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export const WEBHOOK_DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** A delivery row with what its event contributes (type, time, payload bytes). */
export interface WebhookDeliveryRow {
  id: string;
  eventId: string;
  eventType: WebhookEventType;
  eventCreatedAt: Date;
  endpointId: string;
  apiKeyId: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  claimedUntil: Date | null;
  /** The attempt in hand was asked for by hand: it is the only one (no automatic retries follow). */
  manual: boolean;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The delivery as the delivery log shows it (DESIGN §4). */
export interface WebhookDeliveryResource {
  id: string;
  eventId: string;
  eventType: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toDeliveryResource(row: WebhookDeliveryRow): WebhookDeliveryResource {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
