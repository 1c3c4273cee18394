import type { JobsOptions } from 'bullmq';

/** Video's queue (registered by VideoModule through `QueueModule.forFeature`) and its one job. */
export const VIDEO_QUEUE = 'video';
/** Moves one omni video task forward (validate, submit, poll, store); re-delays itself while polling. */
export const VIDEO_PROCESS_JOB = 'video.process';

declare module '../../queue/queue-names.js' {
  interface JobPayloads {
    'video.process': { taskId: string };
  }
}

/** Deterministic job id: enqueueing a task twice is a no-op (STYLE: immich `${id}-${name}`). */
export const videoJobId = (taskId: string): string => `video:${taskId}`;
/** A run that throws (database or Redis hiccup) is retried by BullMQ; the reconciler re-enqueues with the same options. */
export const VIDEO_JOB_OPTIONS = { attempts: 8, backoff: { type: 'exponential', delay: 2000 } } as const satisfies JobsOptions;
