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

  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration until the response is sent',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  readonly apiKeyLookups = new Counter({
    name: 'svc_api_key_lookups_total',
    help: 'API keys looked up in the database (a malformed key is refused before any lookup)',
    registers: [this.registry],
  });

  /** Wallet writes tried again after a lost database connection. */
  readonly walletConnectionRetries = new Counter({
    name: 'svc_wallet_connection_retries_total',
    help: 'Wallet writes tried again after a lost database connection',
    registers: [this.registry],
  });

  readonly walletJournaled = new Counter({
    name: 'svc_wallet_journaled_total',
    help: 'Hold outcomes left to the settlement journal because the database stayed unreachable',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Settlements whose measured cost exceeded the hold: the hold was charged, the rest not collected. */
  readonly walletChargesCapped = new Counter({
    name: 'svc_wallet_charges_capped_total',
    help: 'Settlements whose measured cost exceeded the hold (charged the hold)',
    registers: [this.registry],
  });

  readonly walletUncollectedUsd = new Counter({
    name: 'svc_wallet_uncollected_usd_total',
    help: 'Measured cost above holds that was not charged, in USD',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
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
