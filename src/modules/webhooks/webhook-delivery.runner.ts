import { Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { EndpointGate } from './endpoint-gate.js';
import { nextAttemptAt, parseRetryAfter, RETRY_WINDOW_MS } from './retry-schedule.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from './webhook-delivery.types.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { type SendOutcome, WebhookSender } from './webhook-sender.js';

/** What the job does next: stop, or come back after `delayMs`. */
export type DeliveryStep = { kind: 'done' } | { kind: 'wait'; delayMs: number };

/** A claim outlives the attempt's own timeout by this much before another run may take over. */
const CLAIM_GRACE_MS = 10_000;

export const DISABLED_REASON = 'endpoint_disabled: the endpoint is disabled; pending deliveries stop';
export const WINDOW_REASON = 'retry_window_ended: no success within 24 hours of the event';

/**
 * Moves one delivery forward from its row (the truth): not pending → nothing; not due → wait;
 * endpoint gone or disabled → failed; otherwise claim the attempt (compare-and-set), sign and
 * POST, record the attempt and its outcome. Every step is safe to run twice.
 */
@Injectable()
export class WebhookDeliveryRunner {
  private readonly logger = new Logger(WebhookDeliveryRunner.name);

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly endpoints: WebhookEndpointsService,
    private readonly sender: WebhookSender,
    private readonly gate: EndpointGate,
    private readonly metrics: WebhookMetrics,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /** `endpointId` is the delivery's (from the job): a full endpoint defers the job before any read. */
  async run(deliveryId: string, endpointId: string): Promise<DeliveryStep> {
    if (!this.gate.tryEnter(endpointId)) return { kind: 'wait', delayMs: this.gate.deferralMs(endpointId) };
    try {
      return await this.step(deliveryId);
    } finally {
      this.gate.leave(endpointId);
    }
  }

  private async step(deliveryId: string): Promise<DeliveryStep> {
    const delivery = await this.deliveries.findWithPayload(deliveryId);
    if (!delivery || delivery.status !== 'pending' || !delivery.nextAttemptAt) return { kind: 'done' };
    const now = this.clock.now();
    const dueIn = delivery.nextAttemptAt.getTime() - now.getTime();
    if (dueIn > 0) return { kind: 'wait', delayMs: dueIn };
    if (delivery.claimedUntil && delivery.claimedUntil > now) return { kind: 'wait', delayMs: delivery.claimedUntil.getTime() - now.getTime() };
    if (!delivery.manual && now.getTime() - delivery.eventCreatedAt.getTime() >= RETRY_WINDOW_MS) {
      await this.end(delivery.id, WINDOW_REASON, now);
      return { kind: 'done' };
    }
    const endpoint = await this.endpoints.findForDelivery(delivery.endpointId);
    if (!endpoint || !endpoint.enabled) {
      await this.end(delivery.id, DISABLED_REASON, now);
      return { kind: 'done' };
    }
    return this.attempt(delivery, endpoint.url, endpoint.secret);
  }

  private async attempt(delivery: WebhookDeliveryRow & { payload: string }, url: string, secret: string): Promise<DeliveryStep> {
    const startedAt = this.clock.now();
    const timeoutMs = this.config.env.WEBHOOK_DELIVERY_TIMEOUT_MS;
    const attempt = await this.deliveries.claim(delivery.id, startedAt, new Date(startedAt.getTime() + timeoutMs + CLAIM_GRACE_MS));
    if (attempt === null) return { kind: 'wait', delayMs: 1000 };

    const started = performance.now();
    const outcome = await this.sender.send(url, secret, delivery.eventId, delivery.payload, startedAt);
    const durationMs = performance.now() - started;
    this.gate.recordDuration(delivery.endpointId, durationMs);
    const at = this.clock.now();
    const verdict = judge(outcome, delivery, attempt, at);
    const recorded = await this.deliveries.recordAttempt(delivery.id, {
      attempt,
      manual: delivery.manual,
      startedAt,
      durationMs,
      statusCode: outcome.kind === 'answered' ? outcome.statusCode : null,
      error: verdict.error,
      status: verdict.status,
      nextAttemptAt: verdict.next,
      at,
    });
    if (!recorded) {
      // Our claim expired and another run took the delivery: its outcome is the one that counts.
      this.logger.warn(`attempt ${attempt} of ${delivery.id} ended after its claim was taken over`);
      return { kind: 'done' };
    }
    this.metrics.attempt(resultClass(outcome), durationMs / 1000, verdict.status === 'pending' ? 'retry' : verdict.status);
    return verdict.next ? { kind: 'wait', delayMs: Math.max(0, verdict.next.getTime() - at.getTime()) } : { kind: 'done' };
  }

  private async end(id: string, reason: string, at: Date): Promise<void> {
    if (await this.deliveries.failPending(id, reason, at)) this.metrics.outcomes.inc({ outcome: 'failed' });
  }
}

interface Verdict {
  status: WebhookDeliveryStatus;
  next: Date | null;
  error: string | null;
}

/**
 * 2xx → succeeded. Network error, timeout, 429 and 5xx → the next attempt of the schedule (429's
 * Retry-After honoured), or failed once the 24 h window is over or when the attempt was a manual
 * one. 3xx (never followed) and other 4xx → failed at once (DESIGN §10).
 */
export function judge(outcome: SendOutcome, delivery: Pick<WebhookDeliveryRow, 'eventCreatedAt' | 'manual'>, attempt: number, now: Date): Verdict {
  if (outcome.kind === 'answered' && outcome.statusCode >= 200 && outcome.statusCode < 300) return { status: 'succeeded', next: null, error: null };
  const retryable = outcome.kind === 'unreached' ? outcome.retryable : outcome.statusCode === 429 || outcome.statusCode >= 500;
  const error = outcome.kind === 'unreached' ? outcome.error : describeStatus(outcome.statusCode, outcome.bodyStart);
  if (!retryable || delivery.manual) return { status: 'failed', next: null, error };
  const retryAfterMs = outcome.kind === 'answered' && outcome.statusCode === 429 ? parseRetryAfter(outcome.retryAfter, now) : undefined;
  const next = nextAttemptAt(delivery.eventCreatedAt, attempt, now, retryAfterMs);
  return next ? { status: 'pending', next, error } : { status: 'failed', next: null, error: `${error}; ${WINDOW_REASON}` };
}

function describeStatus(status: number, bodyStart: string): string {
  const kind = status >= 300 && status < 400 ? 'redirect_not_followed' : 'http_error';
  return `${kind}: the receiver answered ${status}${bodyStart ? `: ${bodyStart.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;
}

function resultClass(outcome: SendOutcome): string {
  return outcome.kind === 'answered' ? `${Math.floor(outcome.statusCode / 100)}xx` : 'unreached';
}
