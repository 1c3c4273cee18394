import type { JobsOptions } from 'bullmq';

/** The alternate provider's queue (registered by AlternateVideoModule through `QueueModule.forFeature`) and its one job. */
export const ALTERNATE_QUEUE = 'alternate-video';
/** Moves one alternate task forward (reconcile, poll, store, settle); re-delays itself while polling. */
export const ALTERNATE_PROCESS_JOB = 'alternate.process';

declare module '../../queue/queue-names.js' {
  interface JobPayloads {
    'alternate.process': { taskId: string };
  }
}

/** Deterministic job id: enqueueing a task twice is a no-op. */
export const alternateJobId = (taskId: string): string => `alternate:${taskId}`;
/** A run that throws (database or Redis hiccup) is retried by BullMQ; the reconciler re-enqueues with the same options. */
export const ALTERNATE_JOB_OPTIONS = { attempts: 8, backoff: { type: 'exponential', delay: 2000 } } as const satisfies JobsOptions;
