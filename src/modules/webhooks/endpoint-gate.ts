import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';

/** Endpoints whose attempt times are remembered; the oldest entry goes first past this. */
const REMEMBERED_ENDPOINTS = 10_000;
const MIN_DEFERRAL_MS = 200;
const MAX_DEFERRAL_MS = 30_000;

/**
 * Per-endpoint fairness inside one worker: at most WEBHOOK_ENDPOINT_CONCURRENCY attempts to one
 * endpoint at a time. A job that finds its endpoint full is deferred (not blocked), so a slow or
 * dead receiver holds at most that many of the worker's slots and the others keep flowing. The
 * deferral follows how long that endpoint's attempts take (a moving average, times 1 to 3 for
 * spread), so the jobs of a receiver that times out do not spin through the queue every 200 ms.
 */
@Injectable()
export class EndpointGate {
  private readonly inFlight = new Map<string, number>();
  private readonly typicalMs = new Map<string, number>();

  constructor(private readonly config: AppConfig) {}

  /** Takes a slot for `endpointId`; false when the endpoint already has its share. */
  tryEnter(endpointId: string): boolean {
    const current = this.inFlight.get(endpointId) ?? 0;
    if (current >= this.config.env.WEBHOOK_ENDPOINT_CONCURRENCY) return false;
    this.inFlight.set(endpointId, current + 1);
    return true;
  }

  leave(endpointId: string): void {
    const current = this.inFlight.get(endpointId) ?? 0;
    if (current <= 1) this.inFlight.delete(endpointId);
    else this.inFlight.set(endpointId, current - 1);
  }

  /** Remembers how long an attempt to the endpoint took (exponential moving average). */
  recordDuration(endpointId: string, ms: number): void {
    const previous = this.typicalMs.get(endpointId);
    this.typicalMs.delete(endpointId);
    this.typicalMs.set(endpointId, previous === undefined ? ms : previous * 0.8 + ms * 0.2);
    if (this.typicalMs.size > REMEMBERED_ENDPOINTS) this.typicalMs.delete(this.typicalMs.keys().next().value!);
  }

  /** How long a job turned away by a full endpoint waits before it tries again. */
  deferralMs(endpointId: string): number {
    const typical = Math.min(MAX_DEFERRAL_MS, Math.max(MIN_DEFERRAL_MS, this.typicalMs.get(endpointId) ?? MIN_DEFERRAL_MS));
    return Math.round(typical * (1 + Math.random() * 2));
  }
}
