import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';

/**
 * Per-endpoint fairness inside one worker: at most WEBHOOK_ENDPOINT_CONCURRENCY attempts to one
 * endpoint at a time. A job that finds its endpoint full is deferred (not blocked), so a slow or
 * dead receiver holds at most that many of the worker's slots and the others keep flowing.
 */
@Injectable()
export class EndpointGate {
  private readonly inFlight = new Map<string, number>();

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
}
