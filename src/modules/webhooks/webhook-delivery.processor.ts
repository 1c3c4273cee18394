import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, type Job } from 'bullmq';
import { AppConfig } from '../../config/app-config.js';
import type { JobOf } from '../../queue/queue-names.js';
import { WEBHOOK_DELIVER_JOB, WEBHOOKS_QUEUE } from './webhook-jobs.js';
import { WebhookDeliveryRunner } from './webhook-delivery.runner.js';

/**
 * One job per delivery (`delivery:<uuid>`). It makes the attempt that is due, then moves itself to
 * the delayed set until the next one, keeping its id, so the reconciler always finds it. The
 * concurrency (WEBHOOK_DELIVERY_CONCURRENCY, default 100) is sized for network waits; the decorator
 * cannot read config, so the first job sets it on the running worker (worker roles only).
 */
@Processor(WEBHOOKS_QUEUE, { concurrency: 100, lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: 5 })
export class WebhookDeliveryProcessor extends WorkerHost {
  constructor(
    private readonly runner: WebhookDeliveryRunner,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async process(job: Job<JobOf<typeof WEBHOOK_DELIVER_JOB>>, token?: string): Promise<void> {
    if (job.name !== WEBHOOK_DELIVER_JOB) return;
    const concurrency = this.config.env.WEBHOOK_DELIVERY_CONCURRENCY;
    if (this.worker.concurrency !== concurrency) this.worker.concurrency = concurrency;
    const step = await this.runner.run(job.data.deliveryId, job.data.endpointId);
    if (step.kind === 'wait') {
      await job.moveToDelayed(Date.now() + step.delayMs, token);
      throw new DelayedError();
    }
  }
}
