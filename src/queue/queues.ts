import { getQueueToken } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { withTimeout } from '../../libs/common/index.js';
import type { JobName, JobOf, QueueName } from './queue-names.js';

/** How long a read-only view waits for a queue's counts (Queues.jobCounts). */
const JOB_COUNTS_TIMEOUT_MS = 2000;

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
  /**
   * The queue's job counts by state, or null when Redis does not answer within 2 s (while it
   * reconnects, ioredis queues commands): a read-only view (the admin overview, the metrics
   * scrape) answers without them instead of hanging with Redis.
   */
  async jobCounts(name: QueueName): Promise<Record<'waiting' | 'active' | 'delayed' | 'prioritized' | 'failed', number> | null> {
    try {
      const counts = await withTimeout(this.get(name).getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed'), JOB_COUNTS_TIMEOUT_MS, `job counts of ${name}`);
      return { waiting: counts.waiting ?? 0, active: counts.active ?? 0, delayed: counts.delayed ?? 0, prioritized: counts.prioritized ?? 0, failed: counts.failed ?? 0 };
    } catch {
      return null;
    }
  }

  async getJob(queue: QueueName, jobId: string): Promise<Job | undefined> {
    return (await this.get(queue).getJob(bullJobId(jobId))) ?? undefined;
  }
}
