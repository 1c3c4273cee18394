import { Logger, type Provider } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { redisOptions } from './redis-connection.js';
import { logErrorsQuietly } from './redis-error-log.js';

/** A plain Redis client for health checks and server settings (queues have their own). */
export const REDIS = Symbol('REDIS');

/** The REDIS provider; `lazyConnect` (the CLI's) connects only when something is first sent. */
export function redisProviderWith(options: { lazyConnect: boolean }): Provider {
  return {
    provide: REDIS,
    inject: [AppConfig],
    useFactory: (config: AppConfig) => {
      const client = new Redis({ ...redisOptions(config.env.REDIS_URL), maxRetriesPerRequest: 2, lazyConnect: options.lazyConnect });
      logErrorsQuietly(client, 'Redis client', new Logger('Redis'));
      return client;
    },
  };
}

export const redisProvider: Provider = redisProviderWith({ lazyConnect: false });
