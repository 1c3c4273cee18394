import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { type JobOf, MAINTENANCE_QUEUE, type PERIODIC_TASK_JOB } from './queue-names.js';
import { PeriodicTasks } from './periodic-tasks.js';

/** Runs the periodic tasks that modules registered (reconciler, media retention, …). */
@Processor(MAINTENANCE_QUEUE)
export class MaintenanceProcessor extends WorkerHost {
  private readonly logger = new Logger(MaintenanceProcessor.name);

  constructor(private readonly tasks: PeriodicTasks) {
    super();
  }

  async process(job: Job<JobOf<typeof PERIODIC_TASK_JOB>>): Promise<void> {
    const task = this.tasks.get(job.data.task);
    if (!task) {
      // A scheduler left by an older release: nothing to run, and nothing to retry.
      this.logger.warn(`no periodic task named "${job.data.task}"`);
      return;
    }
    await task.run();
  }
}
