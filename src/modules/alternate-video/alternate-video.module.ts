import { Module, type OnModuleDestroy } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GuardedHttpClient } from '../../../libs/common/index.js';
import { bundledFfmpegPath, KlingAdapter, SandboxAlternateVideoProvider } from '../../../libs/providers/index.js';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { AppConfig } from '../../config/app-config.js';
import { QueueModule } from '../../queue/queue.module.js';
import { AdminModule } from '../admin/index.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { VideoModule } from '../video/video.module.js';
import { AlternateProcessor } from './alternate.processor.js';
import { AlternateCallbackHandler, callbackSecrets } from './alternate-callbacks.js';
import { alternateEnvelope } from './alternate-errors.js';
import { AlternateImageLoader } from './alternate-image.loader.js';
import { ALTERNATE_QUEUE } from './alternate-jobs.js';
import { AlternateMetrics } from './alternate-metrics.js';
import { AlternateTaskEntity } from './alternate-task.entity.js';
import { AlternateTaskProgress } from './alternate-task.progress.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';
import { AlternateTaskRunner } from './alternate-task.runner.js';
import { AlternateTaskService } from './alternate-task.service.js';
import { AlternateCallbackController, AlternateVideoController } from './alternate-video.controller.js';
import { AlternateWorkSources } from './alternate-work-sources.js';

/**
 * The alternate video provider (DESIGN §3 `alternate-video/`): creation with a synchronous
 * upstream create, the `alt:` reader of the shared task endpoint, polling and signed callbacks
 * through one transition, storage and settlement, both adapters, retention, admin list.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([AlternateTaskEntity]),
    QueueModule.forFeature({ queues: [ALTERNATE_QUEUE] }),
    // Every error of these routes is in the alternate envelope (spec, Errors › Envelopes).
    ErrorDomainsModule.forFeature({ domain: 'provider', pathPrefixes: ['/v1/alternate/', '/internal/alternate/'], envelope: alternateEnvelope }),
    BillingModule,
    IdentityModule,
    ProvidersModule,
    AdminModule,
    VideoModule,
  ],
  controllers: [AlternateVideoController, AlternateCallbackController],
  providers: [
    AlternateTaskRepository,
    AlternateTaskService,
    AlternateTaskProgress,
    AlternateTaskRunner,
    AlternateImageLoader,
    AlternateCallbackHandler,
    AlternateProcessor,
    AlternateMetrics,
    AlternateWorkSources,
    {
      provide: SandboxAlternateVideoProvider,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new SandboxAlternateVideoProvider({ ffmpegPath: bundledFfmpegPath(), callbackSecret: callbackSecrets(config)[0]! }),
    },
    {
      provide: KlingAdapter,
      inject: [AppConfig, GuardedHttpClient],
      useFactory: (config: AppConfig, http: GuardedHttpClient) =>
        new KlingAdapter({ accessKey: config.env.KLING_ACCESS_KEY ?? '', secretKey: config.env.KLING_SECRET_KEY ?? '', baseUrl: config.env.KLING_BASE_URL, http }),
    },
  ],
  exports: [AlternateTaskService, KlingAdapter, SandboxAlternateVideoProvider],
})
export class AlternateVideoModule implements OnModuleDestroy {
  constructor(
    private readonly sandbox: SandboxAlternateVideoProvider,
    private readonly live: KlingAdapter,
  ) {}

  async onModuleDestroy(): Promise<void> {
    this.sandbox.close();
    await this.live.close();
  }
}
