import { Injectable } from '@nestjs/common';
import { Queues } from '../../queue/queues.js';
import { deliveryJobId, WEBHOOK_DELIVER_JOB, WEBHOOK_JOB_OPTIONS, WEBHOOKS_QUEUE } from './webhook-jobs.js';

/**
 * Enqueues a delivery's job to run now; a finished job left under its id (kept for inspection) is
 * replaced, and a job still waiting in the delayed set is promoted (a delivery ended while its job
 * waited — its endpoint was disabled — then reopened by hand must not wait for the old wake-up).
 */
@Injectable()
export class WebhookDeliveryJobs {
  constructor(private readonly queues: Queues) {}

  async enqueue(deliveryId: string, endpointId: string): Promise<void> {
    const jobId = deliveryJobId(deliveryId);
    const existing = await this.queues.getJob(WEBHOOKS_QUEUE, jobId);
    if (existing) {
      const state = await existing.getState();
      if (state === 'delayed') {
        // It may have left the delayed set meanwhile (woken, or removed): then it runs, or the reconciler re-adds it.
        await existing.promote().catch(() => undefined);
        return;
      }
      if (state !== 'completed' && state !== 'failed') return;
      await existing.remove();
    }
    await this.queues.add(WEBHOOKS_QUEUE, WEBHOOK_DELIVER_JOB, { deliveryId, endpointId }, jobId, WEBHOOK_JOB_OPTIONS);
  }
}
