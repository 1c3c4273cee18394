import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { MediaService, TaskMediaSweep } from '../media/index.js';
import { AUDIO_IDEMPOTENCY_SWEEP_INTERVAL_MS, AUDIO_IDEMPOTENCY_TTL_MS } from './audio.constants.js';
import { AudioIdempotencyRepository } from './audio-idempotency.repository.js';
import { AudioTaskRepository } from './audio-task.repository.js';

/**
 * What audio keeps, and for how long: seven days after completion the audio is deleted and the
 * task shows no outputs (the row stays); idempotency records are deleted after 24 hours.
 * Periodic tasks `audio-retention` and `audio-idempotency-sweep`.
 */
@Injectable()
export class AudioRetention implements OnModuleInit {
  private readonly sweep: TaskMediaSweep;

  constructor(
    tasks: AudioTaskRepository,
    media: MediaService,
    private readonly idempotency: AudioIdempotencyRepository,
    private readonly periodic: PeriodicTasks,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    this.sweep = new TaskMediaSweep(tasks, media, clock);
  }

  onModuleInit(): void {
    this.periodic.register(this.sweep.periodicTask('audio-retention', this.config.env.MEDIA_SWEEP_INTERVAL_MS));
    this.periodic.register({
      name: 'audio-idempotency-sweep',
      intervalMs: AUDIO_IDEMPOTENCY_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepIdempotencyRecords();
      },
    });
  }

  /** Deletes every audio file past its retention; returns how many. */
  sweepExpiredMedia(): Promise<number> {
    return this.sweep.run();
  }

  /** Deletes idempotency records older than 24 hours; returns how many. */
  sweepIdempotencyRecords(): Promise<number> {
    return this.idempotency.deleteOlderThan(new Date(this.clock.now().getTime() - AUDIO_IDEMPOTENCY_TTL_MS));
  }
}
