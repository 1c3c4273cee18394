import { BullRegistrar } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../config/app-config.js';
import { PeriodicTasks } from './periodic-tasks.js';
import { JobName, QueueName } from './queue-names.js';
import { Queues } from './queues.js';
import { REDIS } from './redis.provider.js';

/**
 * Starts workers only where APP_ROLE asks for them, schedules the periodic tasks, runs the
 * boot-time ones (the reconciler), and warns when Redis may evict queue data.
 */
@Injectable()
export class QueueLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(QueueLifecycle.name);

  constructor(
    private readonly config: AppConfig,
    private readonly registrar: BullRegistrar,
    private readonly tasks: PeriodicTasks,
    private readonly queues: Queues,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.warnOnEvictionPolicy();
    if (!this.config.runsWorkers) return;
    this.registrar.register();
    const maintenance = this.queues.get(QueueName.Maintenance);
    for (const task of this.tasks.all()) {
      await maintenance.upsertJobScheduler(
        `periodic:${task.name}`,
        { every: task.intervalMs },
        { name: JobName.PeriodicTask, data: { task: task.name }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      );
    }
    for (const task of this.tasks.all().filter((t) => t.runOnBoot)) {
      // Failures are logged, not fatal: the scheduler runs the task again soon.
      await task.run().catch((error: unknown) => this.logger.error(`boot run of ${task.name} failed: ${String(error)}`));
    }
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
