import { BullRegistrar, WorkerHost } from '@nestjs/bullmq';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { PinoLogger } from 'nestjs-pino';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.service.js';
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
    private readonly jobLogs: PinoLogger,
    private readonly metrics: Metrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const name of this.registered.list()) logErrorsQuietly(this.queues.get(name), `queue ${name}`, this.logger);
    await this.warnOnEvictionPolicy();
    if (!this.config.runsWorkers) return;
    const hosts = this.discovery.getProviders().flatMap(({ instance }) => (instance instanceof WorkerHost ? [instance] : []));
    for (const host of hosts) this.instrumentJobs(host);
    this.registrar.register();
    for (const host of hosts) logErrorsQuietly(host.worker, `worker of queue ${host.worker.name}`, this.logger);
    await this.scheduler.schedule();
    this.scheduler.startWatching();
  }

  /**
   * Every line a job logs carries its queue, job id and the ids its payload names (`taskId`,
   * `deliveryId`, …), as a request's lines carry its `reqId`; every job is counted by outcome and
   * timed (`svc_jobs_total`, `svc_job_duration_seconds`). Wraps the host's `process` before the
   * registrar binds it into a worker, so no processor has to remember.
   */
  private instrumentJobs(host: WorkerHost): void {
    const process = host.process.bind(host);
    host.process = (job: Job, token?: string) =>
      this.jobLogs.runInContext(
        async () => {
          const labels = { queue: job.queueName, name: job.name };
          const stopTimer = this.metrics.jobDuration.startTimer(labels);
          try {
            const result: unknown = await process(job, token);
            this.metrics.jobs.inc({ ...labels, outcome: 'completed' });
            return result;
          } catch (error) {
            this.metrics.jobs.inc({ ...labels, outcome: 'failed' });
            throw error;
          } finally {
            stopTimer();
          }
        },
        { bindings: { queue: job.queueName, jobId: job.id, ...idsOf(job.data) } },
      );
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

/** The string ids a job's payload carries (`taskId`, `deliveryId`, …), at most four. */
function idsOf(data: unknown): Record<string, string> {
  if (typeof data !== 'object' || data === null) return {};
  return Object.fromEntries(Object.entries(data).filter(([key, value]) => /Id$/.test(key) && typeof value === 'string').slice(0, 4));
}
