import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { Clock } from '../../../libs/common/index.js';
import { Metrics } from '../../observability/metrics.service.js';
import { WebhookDeliveryRepository } from './webhook-delivery.repository.js';

/** Webhook delivery figures (queue depth is the platform's `svc_queue_jobs{queue="webhooks"}`). */
@Injectable()
export class WebhookMetrics implements OnModuleInit {
  /** Attempts by what they led to: `succeeded`, `retry` (another attempt scheduled), `failed`. */
  readonly outcomes: Counter<'outcome'>;
  readonly attemptSeconds: Histogram<'result'>;

  constructor(
    private readonly metrics: Metrics,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly clock: Clock,
  ) {
    const registers = [metrics.registry];
    this.outcomes = new Counter({ name: 'svc_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers });
    this.attemptSeconds = new Histogram({
      name: 'svc_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempt latency, by result class (2xx, 3xx, 4xx, 5xx, unreached)',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
  }

  onModuleInit(): void {
    this.metrics.gauge('svc_webhook_oldest_pending_seconds', 'Age of the oldest pending webhook delivery (0 when none)', [], async (gauge) => {
      const oldest = await this.deliveries.oldestPendingAt();
      gauge.set(oldest ? Math.max(0, (this.clock.now().getTime() - oldest.getTime()) / 1000) : 0);
    });
  }

  attempt(result: string, seconds: number, outcome: 'succeeded' | 'retry' | 'failed'): void {
    this.attemptSeconds.observe({ result }, seconds);
    this.outcomes.inc({ outcome });
  }
}
