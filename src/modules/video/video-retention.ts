import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { MediaService, TaskMediaSweep } from '../media/index.js';
import { VideoTaskRepository } from './video-task.repository.js';

/**
 * Video retention: seven days after completion the video is deleted and the task then shows no
 * links (the task row stays). Runs as the periodic task `video-retention`.
 */
@Injectable()
export class VideoRetention implements OnModuleInit {
  private readonly sweep: TaskMediaSweep;

  constructor(
    tasks: VideoTaskRepository,
    media: MediaService,
    clock: Clock,
    private readonly periodic: PeriodicTasks,
    private readonly config: AppConfig,
  ) {
    this.sweep = new TaskMediaSweep(tasks, media, clock);
  }

  onModuleInit(): void {
    this.periodic.register(this.sweep.periodicTask('video-retention', this.config.env.MEDIA_SWEEP_INTERVAL_MS));
  }

  /** Deletes every video past its retention; returns how many. */
  sweepExpiredMedia(): Promise<number> {
    return this.sweep.run();
  }
}
