/**
 * What the platform knows about queues and jobs: names are plain strings, and each domain
 * declares its own from its folder (immich's JobName/JobOf, made open). A job id is always
 * deterministic — `<kind>:<id>` of the unit of work — so enqueueing the same work twice is a
 * no-op, and the reconciler can tell whether a unit's job exists.
 *
 * A domain adds its job's payload type by augmenting `JobPayloads`, so `Queues.add` and the
 * reconciler stay typed (docs/extending.md › Add a domain):
 *
 *   declare module '../../queue/queue-names.js' {
 *     interface JobPayloads { 'audio.process': { taskId: string } }
 *   }
 *
 * and registers its queue with `QueueModule.forFeature({ queues: ['audio'] })`.
 */
export type QueueName = string;

/** Every job's payload, by job name; domains add theirs through `declare module`. */
export interface JobPayloads {
  /** Runs one registered periodic task (reconciler, media sweeper, …) by name. */
  'periodic-task': { task: string };
}

export type JobName = keyof JobPayloads;
export type JobOf<N extends JobName> = JobPayloads[N];

/** The platform's own queue: periodic tasks of every module run on it. */
export const MAINTENANCE_QUEUE = 'maintenance';
export const PERIODIC_TASK_JOB = 'periodic-task' satisfies JobName;
