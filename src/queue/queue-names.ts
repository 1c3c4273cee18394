/**
 * Queue and job names with their payloads (immich's JobName/JobOf). A job id is always
 * deterministic — `<kind>:<id>` of the unit of work — so enqueueing the same work twice is a
 * no-op, and the reconciler can tell whether a unit's job exists.
 */
export enum QueueName {
  Maintenance = 'maintenance',
  Video = 'video',
  AlternateVideo = 'alternate-video',
  Audio = 'audio',
  Webhooks = 'webhooks',
}

export enum JobName {
  /** Runs one registered periodic task (reconciler, media sweeper, …) by name. */
  PeriodicTask = 'periodic-task',
  /** Moves one omni video task forward (validate, submit, poll, store); re-delays itself while polling. */
  VideoProcess = 'video.process',
  /** Moves one audio task forward (synthesize, store, settle); re-delays itself while reconciling. */
  AudioProcess = 'audio.process',
}

export interface JobPayloads {
  [JobName.PeriodicTask]: { task: string };
  [JobName.VideoProcess]: { taskId: string };
  [JobName.AudioProcess]: { taskId: string };
}

export type JobOf<N extends JobName> = JobPayloads[N];

export const ALL_QUEUES = Object.values(QueueName);
