import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, type Job } from 'bullmq';
import type { JobOf } from '../../queue/queue-names.js';
import { ALTERNATE_PROCESS_JOB, ALTERNATE_QUEUE } from './alternate-jobs.js';
import { AlternateTaskRunner } from './alternate-task.runner.js';

/**
 * One job per task (`alternate:<taskId>`): it runs the task as far as it can, then moves itself
 * to the delayed set until the next poll, keeping its id (a callback promotes it). Started only in
 * worker roles.
 */
@Processor(ALTERNATE_QUEUE, { concurrency: 8, lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: 5 })
export class AlternateProcessor extends WorkerHost {
  constructor(private readonly runner: AlternateTaskRunner) {
    super();
  }

  async process(job: Job<JobOf<typeof ALTERNATE_PROCESS_JOB>>, token?: string): Promise<void> {
    if (job.name !== ALTERNATE_PROCESS_JOB) return;
    const result = await this.runner.run(job.data.taskId);
    if (result.kind === 'wait') {
      await job.moveToDelayed(Date.now() + result.ms, token);
      throw new DelayedError();
    }
  }
}
