import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics } from '../../observability/metrics.service.js';

/** How one generation ended, as counted: the upstream's outcomes and the gateway's own failure. */
export type ImageOutcomeLabel = 'succeeded' | 'refused_safety' | 'no_image' | 'failed' | 'error';

/** `svc_image_generations_total{model,outcome}`, in the app's one registry (so /metrics shows it). */
@Injectable()
export class ImageMetrics {
  private readonly generations: Counter<'model' | 'outcome'>;

  constructor(metrics: Metrics) {
    this.generations = new Counter({
      name: 'svc_image_generations_total',
      help: 'Image generations that reached the upstream, by model and outcome',
      labelNames: ['model', 'outcome'],
      registers: [metrics.registry],
    });
  }

  generation(model: string, outcome: ImageOutcomeLabel): void {
    this.generations.inc({ model, outcome });
  }
}
