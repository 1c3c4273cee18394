import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { MediaService } from '../media/media.service.js';
import { AUDIO_IDEMPOTENCY_SWEEP_INTERVAL_MS, AUDIO_IDEMPOTENCY_TTL_MS } from './audio.constants.js';
import { AudioIdempotencyRepository } from './audio-idempotency.repository.js';
import { AudioTaskRepository } from './audio-task.repository.js';

/** Expired audio files looked at per query of the sweep. */
const SWEEP_BATCH = 200;

/**
 * What audio keeps, and for how long: seven days after completion the audio is deleted and the
 * task shows no outputs (the row stays); idempotency records are deleted after 24 hours.
 * Periodic tasks `audio-retention` and `audio-idempotency-sweep`.
 */
@Injectable()
export class AudioRetention implements OnModuleInit {
  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly idempotency: AudioIdempotencyRepository,
    private readonly media: MediaService,
    private readonly periodic: PeriodicTasks,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.periodic.register({
      name: 'audio-retention',
      intervalMs: this.config.env.MEDIA_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepExpiredMedia();
      },
    });
    this.periodic.register({
      name: 'audio-idempotency-sweep',
      intervalMs: AUDIO_IDEMPOTENCY_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepIdempotencyRecords();
      },
    });
  }

  /** Deletes every audio file past its retention; returns how many. */
  async sweepExpiredMedia(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const expired = await this.tasks.findExpiredMedia(this.clock.now(), SWEEP_BATCH);
      for (const task of expired) {
        await this.media.delete(task.mediaKey!);
        await this.tasks.markMediaDeleted(task.id, this.clock.now());
        deleted++;
      }
      if (expired.length < SWEEP_BATCH) return deleted;
    }
  }

  /** Deletes idempotency records older than 24 hours; returns how many. */
  sweepIdempotencyRecords(): Promise<number> {
    return this.idempotency.deleteOlderThan(new Date(this.clock.now().getTime() - AUDIO_IDEMPOTENCY_TTL_MS));
  }
}
