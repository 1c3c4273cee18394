import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DelayedError, type Job } from 'bullmq';
import type { JobOf } from '../../queue/queue-names.js';
import { AUDIO_PROCESS_JOB, AUDIO_QUEUE } from './audio-jobs.js';
import { AudioTaskRunner } from './audio-task.runner.js';

/**
 * One job per task (`audio:<taskId>`). It runs the task as far as it can go, then — while a lost
 * answer is being reconciled, or a retryable refusal waits out its backoff — moves itself to the
 * delayed set, keeping its id, so the reconciler always finds it. Started only in worker roles.
 */
@Processor(AUDIO_QUEUE, { concurrency: 8, lockDuration: 30_000, stalledInterval: 15_000, maxStalledCount: 5 })
export class AudioProcessor extends WorkerHost {
  constructor(private readonly runner: AudioTaskRunner) {
    super();
  }

  async process(job: Job<JobOf<typeof AUDIO_PROCESS_JOB>>, token?: string): Promise<void> {
    if (job.name !== AUDIO_PROCESS_JOB) return;
    const result = await this.runner.run(job.data.taskId);
    if (result.kind === 'wait') {
      await job.moveToDelayed(Date.now() + result.ms, token);
      throw new DelayedError();
    }
  }
}
