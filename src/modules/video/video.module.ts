import { Logger, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Clock, microsToUsd } from '../../../libs/common/index.js';
import { GeminiVideoAdapter, SandboxVideoProvider } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { JobName, QueueName } from '../../queue/queue-names.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { WorkReconciler } from '../../queue/work-reconciler.js';
import { AdminModule, AdminTaskDirectory } from '../admin/index.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { MediaService } from '../media/index.js';
import { GcsPrefixController } from './gcs-prefix.controller.js';
import { UnprefixedVideoController, VideoController } from './video.controller.js';
import { VideoProcessor } from './video.processor.js';
import { VideoMediaValidator } from './video-media.validator.js';
import { VideoGcsPrefixEntity, VideoTaskEntity } from './video-task.entity.js';
import { VideoTaskRepository } from './video-task.repository.js';
import { VideoTaskRunner } from './video-task.runner.js';
import { VIDEO_JOB_OPTIONS, videoJobId, VideoTaskService } from './video-task.service.js';

/** The ffmpeg binary shipped inside @ffmpeg-installer (null when the package is missing). */
function bundledFfmpeg(): string | null {
  try {
    const path = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    return existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

/** Omni video tasks: creation, retrieval, the worker, both adapters, retention, admin prefixes. */
@Module({
  imports: [TypeOrmModule.forFeature([VideoTaskEntity, VideoGcsPrefixEntity]), BillingModule, IdentityModule, ProvidersModule, AdminModule],
  controllers: [VideoController, UnprefixedVideoController, GcsPrefixController],
  providers: [
    VideoTaskRepository,
    VideoTaskService,
    VideoTaskRunner,
    VideoMediaValidator,
    VideoProcessor,
    { provide: SandboxVideoProvider, useFactory: () => new SandboxVideoProvider({ ffmpegPath: bundledFfmpeg() }) },
    {
      provide: GeminiVideoAdapter,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new GeminiVideoAdapter({ apiKey: config.env.GEMINI_API_KEY ?? '', baseUrl: config.env.GEMINI_BASE_URL }),
    },
  ],
  exports: [VideoTaskService, SandboxVideoProvider, GeminiVideoAdapter],
})
export class VideoModule implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(VideoModule.name);

  constructor(
    private readonly sandbox: SandboxVideoProvider,
    private readonly live: GeminiVideoAdapter,
    private readonly reconciler: WorkReconciler,
    private readonly periodic: PeriodicTasks,
    private readonly directory: AdminTaskDirectory,
    private readonly tasks: VideoTaskRepository,
    private readonly media: MediaService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (!this.sandbox.available()) this.logger.warn('no ffmpeg binary found: sandbox video tasks answer 503');

    this.reconciler.register({
      name: 'video',
      findPending: async () =>
        (await this.tasks.pendingIds()).map((taskId) => ({
          queue: QueueName.Video,
          jobName: JobName.VideoProcess,
          jobId: videoJobId(taskId),
          data: { taskId },
          options: VIDEO_JOB_OPTIONS,
        })),
    });

    this.periodic.register({
      name: 'video-retention',
      intervalMs: this.config.env.MEDIA_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepExpiredMedia();
      },
    });

    this.directory.register({
      kind: 'video',
      list: async (filter) =>
        (await this.tasks.listAll({ limit: filter.limit, after: filter.after, status: filter.status as never, workspaceId: filter.workspaceId })).map(
          (task) => ({
            id: task.id,
            kind: 'video',
            workspaceId: task.workspaceId,
            apiKeyId: task.apiKeyId,
            model: task.model,
            status: task.status,
            phase: task.phase,
            chargedUsd: task.chargedMicros === null ? null : microsToUsd(task.chargedMicros),
            failureReason: task.failureReason,
            createdAt: task.createdAt,
            updatedAt: task.updatedAt,
          }),
        ),
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.live.close();
  }

  /** Seven days after completion the video is deleted; the task then shows no links. */
  async sweepExpiredMedia(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const expired = await this.tasks.findExpiredMedia(this.clock.now(), 200);
      for (const task of expired) {
        await this.media.delete(task.mediaKey!);
        await this.tasks.markMediaDeleted(task.id, this.clock.now());
        deleted++;
      }
      if (expired.length < 200) return deleted;
    }
  }
}
