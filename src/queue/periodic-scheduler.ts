import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { type PeriodicTask, PeriodicTasks } from './periodic-tasks.js';
import { MAINTENANCE_QUEUE, PERIODIC_TASK_JOB } from './queue-names.js';
import { Queues } from './queues.js';

const schedulerId = (task: PeriodicTask): string => `periodic:${task.name}`;

/**
 * Turns the periodic tasks into BullMQ job schedulers on the maintenance queue, and keeps them
 * there. The schedulers live in Redis, so a FLUSHDB or a Redis restart without persistence
 * deletes them, and with them the reconciler that would restore everything else. Each worker
 * therefore checks them on its own in-process timer and registers the missing ones again,
 * which brings the reconciler back and runs it at once (DESIGN §6: nothing lost, no process
 * restart). With several workers each may do so at once: upsertJobScheduler is idempotent.
 */
@Injectable()
export class PeriodicScheduler {
  private readonly logger = new Logger(PeriodicScheduler.name);
  private timer: NodeJS.Timeout | undefined;
  private watching = false;
  /** Set while checks fail (Redis down), so an outage is logged once, not on every tick. */
  private failingSince: number | undefined;

  constructor(
    private readonly tasks: PeriodicTasks,
    private readonly queues: Queues,
    private readonly config: AppConfig,
  ) {}

  /** Registers every periodic task's scheduler and runs the boot-time ones (worker boot). */
  async schedule(): Promise<void> {
    await this.register(this.tasks.all());
    await this.runBootTasks();
  }

  /**
   * Checks the schedulers twice per reconcile interval, so lost schedulers and work are back
   * within one interval whenever Redis lost them. The timer lives in this process, not in
   * Redis, and the next check is armed only when the previous one ended: while Redis is down
   * a check waits for the reconnect (maxRetriesPerRequest: null) instead of piling up.
   */
  startWatching(): void {
    this.watching = true;
    this.armNextCheck();
  }

  stopWatching(): void {
    this.watching = false;
    clearTimeout(this.timer);
  }

  private armNextCheck(): void {
    if (!this.watching) return;
    this.timer = setTimeout(() => void this.check(), this.config.env.RECONCILE_INTERVAL_MS / 2);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    try {
      await this.restoreLost();
      if (this.failingSince !== undefined) {
        this.logger.log(`job scheduler check works again after ${Math.round((Date.now() - this.failingSince) / 1000)} s`);
        this.failingSince = undefined;
      }
    } catch (error) {
      if (this.watching && this.failingSince === undefined) {
        this.failingSince = Date.now();
        this.logger.warn(`job scheduler check failed, retrying quietly until it works: ${String(error)}`);
      }
    } finally {
      this.armNextCheck();
    }
  }

  /**
   * Registers again the schedulers Redis lost. A new `every` scheduler runs its first job at once,
   * so the reconciler re-enqueues pending work now (on one worker: when several register it, the
   * later upserts keep that first job's slot).
   */
  private async restoreLost(): Promise<void> {
    const maintenance = this.queues.get(MAINTENANCE_QUEUE);
    const lost: PeriodicTask[] = [];
    for (const task of this.tasks.all()) if (!(await maintenance.getJobScheduler(schedulerId(task)))) lost.push(task);
    if (lost.length === 0) return;
    this.logger.warn(`job schedulers missing from Redis (flushed or restarted?), registering them again: ${lost.map((t) => t.name).join(', ')}`);
    await this.register(lost);
  }

  private async register(tasks: PeriodicTask[]): Promise<void> {
    const maintenance = this.queues.get(MAINTENANCE_QUEUE);
    for (const task of tasks) {
      await maintenance.upsertJobScheduler(
        schedulerId(task),
        { every: task.intervalMs },
        { name: PERIODIC_TASK_JOB, data: { task: task.name }, opts: { removeOnComplete: 100, removeOnFail: 100 } },
      );
    }
  }

  private async runBootTasks(): Promise<void> {
    for (const task of this.tasks.all().filter((t) => t.runOnBoot)) {
      // Failures are logged, not fatal: the scheduler runs the task again soon.
      await task.run().catch((error: unknown) => this.logger.error(`run of ${task.name} failed: ${String(error)}`));
    }
  }
}
