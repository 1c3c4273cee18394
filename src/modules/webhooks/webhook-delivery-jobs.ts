import { Injectable } from '@nestjs/common';
import { Queues } from '../../queue/queues.js';
import { deliveryJobId, WEBHOOK_DELIVER_JOB, WEBHOOK_JOB_OPTIONS, WEBHOOKS_QUEUE } from './webhook-jobs.js';

/** Enqueues a delivery's job; a finished job left under its id (kept for inspection) is replaced. */
@Injectable()
export class WebhookDeliveryJobs {
  constructor(private readonly queues: Queues) {}

  async enqueue(deliveryId: string, endpointId: string): Promise<void> {
    const jobId = deliveryJobId(deliveryId);
    const existing = await this.queues.getJob(WEBHOOKS_QUEUE, jobId);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed') return;
      await existing.remove();
    }
    await this.queues.add(WEBHOOKS_QUEUE, WEBHOOK_DELIVER_JOB, { deliveryId, endpointId }, jobId, WEBHOOK_JOB_OPTIONS);
  }
}
