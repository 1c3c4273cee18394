import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Global, Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.service.js';
import { MaintenanceProcessor } from './maintenance.processor.js';
import { PeriodicScheduler } from './periodic-scheduler.js';
import { PeriodicTasks } from './periodic-tasks.js';
import { QueueLifecycle } from './queue-lifecycle.js';
import { ALL_QUEUES } from './queue-names.js';
import { Queues } from './queues.js';
import { REDIS, redisProvider } from './redis.provider.js';
import { WorkReconciler } from './work-reconciler.js';

/**
 * BullMQ on Redis. Queues exist in every role; workers are registered only when APP_ROLE runs
 * them (manual registration in QueueLifecycle). Global, like config and the database: platform
 * configured once (`forRoot`) that every domain uses to enqueue and register its periodic work.
 */
@Global()
@Module({})
export class QueueModule implements OnModuleInit {
  constructor(
    private readonly tasks: PeriodicTasks,
    private readonly reconciler: WorkReconciler,
    private readonly queues: Queues,
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: QueueModule,
      imports: [
        DiscoveryModule,
        BullModule.forRoot({
          connection: { url: config.env.REDIS_URL, maxRetriesPerRequest: null },
          prefix: config.env.QUEUE_PREFIX,
          extraOptions: { manualRegistration: true },
        }),
        BullModule.registerQueue(...ALL_QUEUES.map((name) => ({ name }))),
      ],
      providers: [PeriodicTasks, PeriodicScheduler, Queues, WorkReconciler, MaintenanceProcessor, QueueLifecycle, redisProvider],
      exports: [BullModule, PeriodicTasks, Queues, WorkReconciler, REDIS],
    };
  }

  onModuleInit(): void {
    this.tasks.register({
      name: 'reconcile-work',
      intervalMs: this.config.env.RECONCILE_INTERVAL_MS,
      runOnBoot: true,
      run: async () => {
        await this.reconciler.reconcile();
      },
    });
    this.metrics.gauge('svc_queue_jobs', 'Jobs per queue and state', ['queue', 'state'], async (gauge) => {
      gauge.reset();
      for (const name of ALL_QUEUES) {
        const counts = await this.queues.get(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        for (const [state, count] of Object.entries(counts)) gauge.set({ queue: name, state }, count);
      }
    });
  }
}
