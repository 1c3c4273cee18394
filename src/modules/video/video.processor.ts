import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, type Job } from 'bullmq';
import type { JobOf } from '../../queue/queue-names.js';
import { VideoTaskRunner } from './video-task.runner.js';
import { VIDEO_PROCESS_JOB, VIDEO_QUEUE } from './video-jobs.js';

/**
 * One job per task (`video:<taskId>`). It runs the task as far as it can go, then — while the
 * upstream is generating — moves itself to the delayed set until the next poll, keeping its id,
 * so the reconciler always finds it. Started only in worker roles (QueueLifecycle).
 */
@Processor(VIDEO_QUEUE, { concurrency: 8, lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: 5 })
export class VideoProcessor extends WorkerHost {
  constructor(private readonly runner: VideoTaskRunner) {
    super();
  }

  async process(job: Job<JobOf<typeof VIDEO_PROCESS_JOB>>, token?: string): Promise<void> {
    if (job.name !== VIDEO_PROCESS_JOB) return;
    const result = await this.runner.run(job.data.taskId);
    if (result.kind === 'wait') {
      await job.moveToDelayed(Date.now() + result.ms, token);
      throw new DelayedError();
    }
  }
}
