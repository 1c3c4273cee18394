import { Injectable, Logger } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { Clock } from '../../../libs/common/index.js';
import { EndpointGate } from './endpoint-gate.js';
import { nextAttemptAt, parseRetryAfter, RETRY_WINDOW_MS } from './retry-schedule.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { type DeliveryClaim, WebhookDeliveryRepository } from './webhook-delivery.repository.js';
import type { WebhookDeliveryRow, WebhookDeliveryStatus } from './webhook-delivery.types.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { type SendOutcome, WebhookSender } from './webhook-sender.js';

/** What the job does next: stop, or come back after `delayMs`. */
export type DeliveryStep = { kind: 'done' } | { kind: 'wait'; delayMs: number };

export const DISABLED_REASON = 'endpoint_disabled: the endpoint is disabled; pending deliveries stop';
export const WINDOW_REASON = 'retry_window_ended: no success within 24 hours of the event';

/**
 * Moves one delivery forward from its row (the truth). It first tries to claim the attempt
 * (compare-and-set, with the payload, URL and sealed secret in the same read); when that fails the
 * row says why: not pending → nothing; not due → wait; endpoint gone or disabled, or the 24 h
 * window over → failed. A claimed attempt is signed, POSTed, and recorded with its outcome. Claims
 * and records of concurrent jobs go together in one statement each (the repository's group
 * commits), which is what lets one worker make over a thousand attempts a second. Every step is
 * safe to run twice.
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
    const claim = await this.deliveries.claim(deliveryId);
    if (claim.kind === 'claimed') return this.attempt(claim);
    // Not claimed: say why from the row as the claim saw it.
    const { delivery, endpointEnabled } = claim;
    if (!delivery || delivery.status !== 'pending' || !delivery.nextAttemptAt) return { kind: 'done' };
    const now = this.clock.now();
    const dueIn = delivery.nextAttemptAt.getTime() - now.getTime();
    if (dueIn > 0) return { kind: 'wait', delayMs: dueIn };
    if (delivery.claimedUntil && delivery.claimedUntil > now) return { kind: 'wait', delayMs: delivery.claimedUntil.getTime() - now.getTime() };
    if (!delivery.manual && now.getTime() - delivery.eventCreatedAt.getTime() >= RETRY_WINDOW_MS) {
      await this.end(delivery.id, WINDOW_REASON, now);
      return { kind: 'done' };
    }
    if (!endpointEnabled) {
      await this.end(delivery.id, DISABLED_REASON, now);
      return { kind: 'done' };
    }
    // Another statement held the row (SKIP LOCKED) or it changed meanwhile: look again shortly.
    return { kind: 'wait', delayMs: 1000 };
  }

  private async attempt(claim: Extract<DeliveryClaim, { kind: 'claimed' }>): Promise<DeliveryStep> {
    const { delivery, attempt } = claim;
    const startedAt = this.clock.now();
    // The sealed secret was read with the claim: a rotation committed before it signs from now on.
    const secret = this.endpoints.secretOf(delivery.endpointId, claim.secretSealed);
    const started = performance.now();
    const outcome = await this.sender.send(claim.url, secret, delivery.eventId, claim.payload, startedAt);
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
