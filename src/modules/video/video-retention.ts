import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { MediaService } from '../media/index.js';
import { VideoTaskRepository } from './video-task.repository.js';

/** Expired videos looked at per query of the sweep. */
const SWEEP_BATCH = 200;

/**
 * Video retention: seven days after completion the video is deleted and the task then shows no
 * links (the task row stays). Runs as the periodic task `video-retention`.
 */
@Injectable()
export class VideoRetention implements OnModuleInit {
  constructor(
    private readonly tasks: VideoTaskRepository,
    private readonly media: MediaService,
    private readonly periodic: PeriodicTasks,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.periodic.register({
      name: 'video-retention',
      intervalMs: this.config.env.MEDIA_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepExpiredMedia();
      },
    });
  }

  /** Deletes every video past its retention; returns how many. */
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
}
