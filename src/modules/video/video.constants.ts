import type { JobsOptions } from 'bullmq';

/** Signed video links live at most this long (spec: under one hour). */
export const VIDEO_LINK_TTL_SECONDS = 3600;
/** Videos are kept seven days after completion (spec). */
export const VIDEO_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** The subject type of a video task's hold. */
export const HOLD_SUBJECT = 'video_task';

/** Deterministic job id: enqueueing a task twice is a no-op (STYLE: immich `${id}-${name}`). */
export const videoJobId = (taskId: string): string => `video:${taskId}`;
/** A run that throws (database or Redis hiccup) is retried by BullMQ; the reconciler re-enqueues with the same options. */
export const VIDEO_JOB_OPTIONS = { attempts: 8, backoff: { type: 'exponential', delay: 2000 } } as const satisfies JobsOptions;
