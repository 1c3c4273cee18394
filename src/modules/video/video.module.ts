import { Logger, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { bundledFfmpegPath, GeminiVideoAdapter, SandboxVideoProvider } from '../../../libs/providers/index.js';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { AppConfig } from '../../config/app-config.js';
import { QueueModule } from '../../queue/queue.module.js';
import { AdminModule } from '../admin/index.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { GcsPrefixController } from './gcs-prefix.controller.js';
import { UnprefixedVideoController, VideoController } from './video.controller.js';
import { VideoProcessor } from './video.processor.js';
import { VideoMediaValidator } from './video-media.validator.js';
import { VideoGcsPrefixEntity, VideoTaskEntity } from './video-task.entity.js';
import { VideoTaskRepository } from './video-task.repository.js';
import { VideoTaskRunner } from './video-task.runner.js';
import { VideoTaskService } from './video-task.service.js';
import { VideoRetention } from './video-retention.js';
import { VideoWorkSources } from './video-work-sources.js';
import { GenerationTaskReaders } from './generation-task-readers.service.js';
import { VIDEO_QUEUE } from './video-jobs.js';

/** Omni video tasks: creation, retrieval, the worker, both adapters, retention, admin prefixes. */
@Module({
  imports: [
    TypeOrmModule.forFeature([VideoTaskEntity, VideoGcsPrefixEntity]),
    QueueModule.forFeature({ queues: [VIDEO_QUEUE] }),
    ErrorDomainsModule.forFeature({ domain: 'video', pathPrefixes: ['/v1/contents/', '/contents/'] }),
    BillingModule,
    IdentityModule,
    ProvidersModule,
    AdminModule,
  ],
  controllers: [VideoController, UnprefixedVideoController, GcsPrefixController],
  providers: [
    VideoTaskRepository,
    VideoTaskService,
    VideoTaskRunner,
    VideoMediaValidator,
    VideoProcessor,
    VideoRetention,
    VideoWorkSources,
    GenerationTaskReaders,
    { provide: SandboxVideoProvider, useFactory: () => new SandboxVideoProvider({ ffmpegPath: bundledFfmpegPath() }) },
    {
      provide: GeminiVideoAdapter,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new GeminiVideoAdapter({ apiKey: config.env.GEMINI_API_KEY ?? '', baseUrl: config.env.GEMINI_BASE_URL }),
    },
  ],
  exports: [VideoTaskService, SandboxVideoProvider, GeminiVideoAdapter, GenerationTaskReaders],
})
export class VideoModule implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(VideoModule.name);

  constructor(
    private readonly sandbox: SandboxVideoProvider,
    private readonly live: GeminiVideoAdapter,
  ) {}

  onModuleInit(): void {
    if (!this.sandbox.available()) this.logger.warn('no ffmpeg binary found: sandbox video tasks answer 503');
  }

  async onModuleDestroy(): Promise<void> {
    await this.live.close();
  }
}
