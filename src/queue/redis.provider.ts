import { Logger, type Provider } from '@nestjs/common';
import { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { redisOptions } from './redis-connection.js';
import { logErrorsQuietly } from './redis-error-log.js';

/** A plain Redis client for health checks and server settings (queues have their own). */
export const REDIS = Symbol('REDIS');

export const redisProvider: Provider = {
  provide: REDIS,
  inject: [AppConfig],
  useFactory: (config: AppConfig) => {
    const client = new Redis({ ...redisOptions(config.env.REDIS_URL), maxRetriesPerRequest: 2, lazyConnect: false });
    logErrorsQuietly(client, 'Redis client', new Logger('Redis'));
    return client;
  },
};
