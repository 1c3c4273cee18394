import { BullRegistrar, WorkerHost } from '@nestjs/bullmq';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { PeriodicScheduler } from './periodic-scheduler.js';
import { Queues } from './queues.js';
import { logErrorsQuietly } from './redis-error-log.js';
import { REDIS } from './redis.provider.js';
import { RegisteredQueues } from './registered-queues.js';

/**
 * Starts workers only where APP_ROLE asks for them, schedules the periodic tasks (and keeps
 * them scheduled), runs the boot-time ones (the reconciler), warns when Redis may evict queue
 * data, and routes the queues' and workers' connection errors to the log, quietly.
 */
@Injectable()
export class QueueLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(QueueLifecycle.name);

  constructor(
    private readonly config: AppConfig,
    private readonly registrar: BullRegistrar,
    private readonly scheduler: PeriodicScheduler,
    private readonly queues: Queues,
    private readonly registered: RegisteredQueues,
    private readonly discovery: DiscoveryService,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const name of this.registered.list()) logErrorsQuietly(this.queues.get(name), `queue ${name}`, this.logger);
    await this.warnOnEvictionPolicy();
    if (!this.config.runsWorkers) return;
    this.registrar.register();
    for (const { instance } of this.discovery.getProviders()) {
      if (instance instanceof WorkerHost) logErrorsQuietly(instance.worker, `worker of queue ${instance.worker.name}`, this.logger);
    }
    await this.scheduler.schedule();
    this.scheduler.startWatching();
  }

  /** Before the queues close (their onApplicationShutdown), so no check runs on a closed connection. */
  beforeApplicationShutdown(): void {
    this.scheduler.stopWatching();
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }

  private async warnOnEvictionPolicy(): Promise<void> {
    try {
      const [, policy] = (await this.redis.config('GET', 'maxmemory-policy')) as [string, string];
      if (policy !== 'noeviction') {
        this.logger.warn(
          `Redis maxmemory-policy is "${policy}", not "noeviction": under memory pressure Redis may evict queue jobs. ` +
            'Nothing is lost (the reconciler re-enqueues from PostgreSQL), but work stalls until it runs. Set maxmemory-policy noeviction.',
        );
      }
    } catch (error) {
      this.logger.warn(`could not read Redis maxmemory-policy: ${String(error)}`);
    }
  }
}
