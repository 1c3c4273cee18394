import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { Logger as PinoLogger } from 'pino';
import { ErrorDomainsModule } from '../app/error-domains.module.js';
import { LoggingModule } from '../app/logger.js';
import { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { AdminService } from '../modules/admin/admin.service.js';
import { WalletCoreModule } from '../modules/billing/wallet-core.module.js';
import { IdentityCoreModule } from '../modules/identity/identity-core.module.js';
import { MetricsModule } from '../observability/metrics.module.js';
import { REDIS, redisProviderWith } from '../queue/redis.provider.js';

/**
 * The Redis client the wallet core (its settlement journal) and identity may use, connected only
 * when a command first sends something: most commands never do, so they neither wait for a
 * connection nor need Redis up. The HTTP app's client comes from QueueModule with BullMQ.
 */
@Global()
@Module({
  providers: [redisProviderWith({ lazyConnect: true })],
  exports: [REDIS],
})
class CliRedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}

/**
 * What an operator command needs, and nothing else: config, logs, metrics (the wallet counts),
 * the database, a lazily connected Redis client, the identity and wallet cores (no guards,
 * controllers, queues, periodic tasks or OpenAPI decorators) and the AdminService the admin API
 * also calls. test/admin/cli.test.ts fails if @nestjs/swagger or bullmq is ever loaded again.
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
        CliRedisModule,
        IdentityCoreModule,
        WalletCoreModule,
      ],
      providers: [AdminService],
    };
  }
}
