/** The webhooks queue (registered by WebhookDeliveriesModule through `QueueModule.forFeature`) and its one job. */
export const WEBHOOKS_QUEUE = 'webhooks';
/** Makes the delivery's next attempt when it is due; re-delays itself until the delivery ends. */
export const WEBHOOK_DELIVER_JOB = 'webhooks.deliver';

declare module '../../queue/queue-names.js' {
  interface JobPayloads {
    'webhooks.deliver': { deliveryId: string; endpointId: string };
  }
}

/** The endpoint id rides along so a job whose endpoint is full is deferred before any database read. */
/** One job per delivery, under the delivery's own id (`delivery:<uuid>`): a repeat enqueue is a no-op. */
export const deliveryJobId = (deliveryId: string): string => deliveryId;

/** BullMQ's own retries stay off: the delivery row holds the schedule and the processor re-delays the job. */
export const WEBHOOK_JOB_OPTIONS = { attempts: 1 } as const;
