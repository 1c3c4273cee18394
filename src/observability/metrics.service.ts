import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The Prometheus registry of this app instance (not prom-client's global one, so several apps
 * in one process — tests — do not collide). Collectors that need other services (queue depths,
 * open holds) are registered by their owners through `gauge()` callbacks.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = this.counter('svc_http_requests_total', 'HTTP requests answered, by method, route and status', ['method', 'route', 'status']);

  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration until the response is sent',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  readonly apiKeyLookups = this.counter('svc_api_key_lookups_total', 'API keys looked up in the database (a malformed key is refused before any lookup)');

  /** Key cache outcomes: hit, miss (read from the database, then kept), bypass (channel not subscribed: database). */
  readonly apiKeyCache = this.counter('svc_api_key_cache_total', 'API key cache outcomes of well-formed keys: hit, miss, bypass (invalidation channel down)', ['outcome']);

  /** Wallet writes tried again after a lost database connection. */
  readonly walletConnectionRetries = this.counter('svc_wallet_connection_retries_total', 'Wallet writes tried again after a lost database connection');

  readonly walletJournaled = this.counter('svc_wallet_journaled_total', 'Hold outcomes left to the settlement journal because the database stayed unreachable', ['outcome']);

  /** Settlements whose measured cost exceeded the hold: the hold was charged, the rest not collected. */
  readonly walletChargesCapped = this.counter('svc_wallet_charges_capped_total', 'Settlements whose measured cost exceeded the hold (charged the hold)');

  readonly walletUncollectedUsd = this.counter('svc_wallet_uncollected_usd_total', 'Measured cost above holds that was not charged, in USD');

  /** Money charged on settlement, by the hold's subject type (text, video, audio, image, alternate…). */
  readonly moneyCaptured = this.counter('svc_money_captured_micros_total', 'Money captured on settlement, in micro-USD, by kind (the hold subject type)', ['kind']);

  /** Settlements of holds whose asynchronous commit a database crash lost (charged directly, `adjust` entry). */
  readonly walletLostHoldsCharged = this.counter('svc_wallet_lost_holds_charged_total', 'Settlements of holds the database lost in a crash, charged directly with an adjust entry');

  readonly upstreamCalls = this.counter('svc_upstream_calls_total', 'Calls to upstream adapters (sandbox included), by capability, adapter, method and outcome', [
    'capability',
    'adapter',
    'method',
    'outcome',
  ]);

  readonly upstreamDuration = new Histogram({
    name: 'svc_upstream_call_duration_seconds',
    help: 'Duration of upstream adapter calls (a stream: until it ends), by capability, adapter, method and outcome',
    labelNames: ['capability', 'adapter', 'method', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
    registers: [this.registry],
  });

  readonly jobs = this.counter('svc_jobs_total', 'Queue jobs processed, by queue, job name and outcome (completed, failed)', ['queue', 'name', 'outcome']);

  readonly jobDuration = new Histogram({
    name: 'svc_job_duration_seconds',
    help: 'Duration of queue jobs, by queue and job name',
    labelNames: ['queue', 'name'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
  }

  /** A counter in this app's registry. */
  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge whose value is read from `collect` at scrape time. */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect: (gauge: Gauge<L>) => Promise<void>): Gauge<L> {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await collect(this);
      },
    });
  }
}
