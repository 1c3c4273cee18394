import { getQueueToken } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, JobsOptions, Queue } from 'bullmq';
import type { JobName, JobOf, QueueName } from './queue-names.js';

/**
 * Our job ids read `<kind>:<id>` (DESIGN §6), but ':' is BullMQ's key separator: it refuses a
 * custom id containing one ("Custom Id cannot contain :"), except — a legacy allowance for old
 * repeatable jobs that a future release drops — an id with exactly two. So `video:omni:<uuid>`
 * happened to pass while `delivery:<uuid>` failed. Every id goes through here on its way in and
 * out of BullMQ, so callers keep writing `<kind>:<id>`.
 */
export function bullJobId(jobId: string): string {
  return jobId.replaceAll(':', '.');
}

/** Typed access to every queue by name; `add` always uses the deterministic job id. */
@Injectable()
export class Queues {
  constructor(private readonly moduleRef: ModuleRef) {}

  get(name: QueueName): Queue {
    return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
  }

  /** Enqueues once per `jobId`: a repeat while the job exists is a no-op in BullMQ. */
  async add<N extends JobName>(queue: QueueName, name: N, data: JobOf<N>, jobId: string, options: JobsOptions = {}): Promise<void> {
    await this.get(queue).add(name, data, { removeOnComplete: 1000, removeOnFail: 5000, ...options, jobId: bullJobId(jobId) });
  }

  /**
   * Several jobs of one queue in one Redis round trip (a MULTI), each once per `jobId` like
   * `add`: what a batch of task creations (TaskCreations) enqueues after its commit.
   */
  async addBulk(queue: QueueName, jobs: ReadonlyArray<{ name: JobName; data: JobOf<JobName>; jobId: string; options?: JobsOptions }>): Promise<void> {
    if (jobs.length === 0) return;
    await this.get(queue).addBulk(
      jobs.map((job) => ({ name: job.name, data: job.data, opts: { removeOnComplete: 1000, removeOnFail: 5000, ...job.options, jobId: bullJobId(job.jobId) } })),
    );
  }

  /** The job enqueued under `jobId` (as given to `add`), if BullMQ still has it. */
  async getJob(queue: QueueName, jobId: string): Promise<Job | undefined> {
    return (await this.get(queue).getJob(bullJobId(jobId))) ?? undefined;
  }
}
