import { type DynamicModule, Module } from '@nestjs/common';
import type { Logger as PinoLogger } from 'pino';
import { ErrorDomainsModule } from '../app/error-domains.module.js';
import { LoggingModule } from '../app/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { AdminService } from '../modules/admin/admin.service.js';
import { BillingModule } from '../modules/billing/billing.module.js';
import { IdentityModule } from '../modules/identity/identity.module.js';
import { MetricsModule } from '../observability/metrics.module.js';
import { QueueModule } from '../queue/queue.module.js';

/**
 * What an operator command needs, and nothing else: the platform (config, database, the queue
 * platform billing registers its periodic work on), identity and billing, and the AdminService the
 * admin API also calls. No domain module, controller, provider adapter or media driver is loaded,
 * so a command answers in well under a second instead of booting the whole service.
 */
@Module({})
export class CliModule {
  static create(config: AppConfig, logger: PinoLogger): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        MetricsModule,
        ErrorDomainsModule.forRoot(),
        // Refusals read as the admin API's do (`admin.not_found`), as AdminModule registers them.
        ErrorDomainsModule.forFeature({ domain: 'admin', pathPrefixes: ['/admin/'] }),
        DatabaseModule.forRoot(config),
        QueueModule.forRoot(config),
        IdentityModule,
        BillingModule,
      ],
      providers: [AdminService],
    };
  }
}
