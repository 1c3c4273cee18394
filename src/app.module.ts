import { type DynamicModule, Module } from '@nestjs/common';
import { Clock, ErrorDomains } from '../libs/common/index.js';
import type { Logger as PinoLogger } from 'pino';
import { ErrorDomainsModule } from './app/error-domains.module.js';
import { createRootLogger, LoggingModule } from './app/logger.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { AdminModule } from './modules/admin/admin.module.js';
import { AlternateVideoModule } from './modules/alternate-video/alternate-video.module.js';
import { AudioModule } from './modules/audio/index.js';
import { BillingModule } from './modules/billing/billing.module.js';
import { HealthModule } from './modules/health/health.module.js';
import { ImagesModule } from './modules/images/index.js';
import { MetricsModule } from './observability/metrics.module.js';
import { IdentityModule } from './modules/identity/identity.module.js';
import { MediaModule, type MediaModuleOptions } from './modules/media/media.module.js';
import { ProvidersModule } from './modules/providers/providers.module.js';
import { RealtimeModule } from './modules/realtime/index.js';
import { VideoModule } from './modules/video/video.module.js';
import { TextModule } from './modules/text/text.module.js';
import { WebhooksModule } from './modules/webhooks/webhooks.module.js';
import { QueueModule } from './queue/queue.module.js';

export interface AppModuleOptions {
  /** Tests pass a ManualClock to move time. */
  clock?: Clock;
  /** Extra modules (tests register sample work sources this way). */
  imports?: DynamicModule['imports'];
  /** Media options, e.g. a MediaStorage of your own instead of the configured driver. */
  media?: MediaModuleOptions;
  /** The error-prefix registry the exception filter reads (createApp passes the filter's). */
  errorDomains?: ErrorDomains;
  /** The process's root logger (createApp passes the one Fastify writes with); else one from LOG_LEVEL / LOG_PRETTY. */
  logger?: PinoLogger;
}

@Module({})
export class AppModule {
  static create(config: AppConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, options.clock),
        LoggingModule.forRoot(options.logger ?? createRootLogger(config)),
        MetricsModule,
        ErrorDomainsModule.forRoot(options.errorDomains),
        DatabaseModule.forRoot(config),
        QueueModule.forRoot(config),
        ProvidersModule,
        IdentityModule,
        BillingModule,
        MediaModule.forRoot(options.media),
        AdminModule,
        HealthModule,
        VideoModule,
        AlternateVideoModule,
        TextModule,
        AudioModule,
        RealtimeModule,
        ImagesModule,
        WebhooksModule,
        ...(options.imports ?? []),
      ],
    };
  }
}
