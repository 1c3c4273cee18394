import { BullModule } from '@nestjs/bullmq';
import { type DynamicModule, Global, Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.service.js';
import { MaintenanceProcessor } from './maintenance.processor.js';
import { PeriodicScheduler } from './periodic-scheduler.js';
import { PeriodicTasks } from './periodic-tasks.js';
import { QueueLifecycle } from './queue-lifecycle.js';
import { MAINTENANCE_QUEUE, type QueueName } from './queue-names.js';
import { Queues } from './queues.js';
import { TaskCreations } from './task-creations.js';
import { REDIS, redisProvider } from './redis.provider.js';
import { RegisteredQueues } from './registered-queues.js';
import { WorkReconciler } from './work-reconciler.js';

export interface QueueFeatureOptions {
  /** The BullMQ queues the module's processors and services use. */
  queues: readonly QueueName[];
}

/** A domain's queues (`QueueModule.forFeature`); a module of its own so QueueModule's registrations run once. */
@Module({})
export class QueueFeatureModule {}

/**
 * BullMQ on Redis. Queues exist in every role; workers are registered only when APP_ROLE runs
 * them (manual registration in QueueLifecycle). Global, like config and the database: platform
 * configured once (`forRoot`) that every domain uses to enqueue and register its periodic work.
 * A domain adds its own queues with `forFeature`, from its module's `imports`.
 */
@Global()
@Module({})
export class QueueModule implements OnModuleInit {
  constructor(
    private readonly tasks: PeriodicTasks,
    private readonly reconciler: WorkReconciler,
    private readonly queues: Queues,
    private readonly registered: RegisteredQueues,
    private readonly creations: TaskCreations,
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
        BullModule.registerQueue({ name: MAINTENANCE_QUEUE }),
      ],
      providers: [PeriodicTasks, PeriodicScheduler, Queues, TaskCreations, RegisteredQueues, WorkReconciler, MaintenanceProcessor, QueueLifecycle, redisProvider],
      exports: [BullModule, PeriodicTasks, Queues, TaskCreations, RegisteredQueues, WorkReconciler, REDIS],
    };
  }

  /**
   * Registers a domain's queues on the shared connection and adds them to the queues the
   * platform reports and watches. `imports: [QueueModule.forFeature({ queues: ['audio'] })]`.
   */
  static forFeature(options: QueueFeatureOptions): DynamicModule {
    const bull = BullModule.registerQueue(...options.queues.map((name) => ({ name })));
    return {
      module: QueueFeatureModule,
      imports: [bull],
      providers: [
        {
          // Nothing injects it: instantiating it is the registration.
          provide: `queue-feature:${options.queues.join(',')}`,
          inject: [RegisteredQueues],
          useFactory: (registered: RegisteredQueues) => registered.add(options.queues),
        },
      ],
      exports: [bull],
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
      // Read together: with Redis away each waits its 2 s at once, and the queue has no samples.
      const names = this.registered.list();
      const all = await Promise.all(names.map((name) => this.queues.jobCounts(name)));
      gauge.reset();
      names.forEach((name, i) => {
        for (const [state, count] of Object.entries(all[i] ?? {})) gauge.set({ queue: name, state }, count);
      });
    });
    // Group commit of task creations: transactions, creations they carried, batches done again alone.
    this.metrics.gauge('svc_task_creation_group_commit', 'Task creation transactions (calls), creations carried (items) and batches redone alone since start', ['count'], async (gauge) => {
      const { calls, items, redone } = this.creations.counters();
      gauge.set({ count: 'calls' }, calls);
      gauge.set({ count: 'items' }, items);
      gauge.set({ count: 'redone' }, redone);
    });
  }
}
