import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { Metrics } from '../../observability/metrics.service.js';
import { AdminTaskListService, type TaskCounts } from './admin-task-list.service.js';

const HOUR_MS = 3_600_000;
/** One count of the last hour serves every scrape for this long (several scrapers included). */
export const TASK_COUNTS_TTL_MS = 10_000;

/**
 * Tasks by kind and status for Prometheus (issue 16, item 8): `svc_tasks_last_hour{kind,status}`
 * and `svc_tasks_last_hour_capped{kind}`, counted at scrape time through the admin task directory
 * (every registered kind, as the overview counts them; no other module's tables are read here).
 * The count is read at most once per TASK_COUNTS_TTL_MS and concurrent scrapes share it, so
 * scrapes cannot hammer the database. A kind and status seen once stays in the exposition, at 0
 * once the hour holds none of its tasks (a gauge that vanishes reads as a gap, not a zero).
 */
@Injectable()
export class AdminTaskMetrics implements OnModuleInit {
  private readonly logger = new Logger(AdminTaskMetrics.name);
  private cached?: { at: number; counts: Promise<TaskCounts> };
  private readonly seen = new Map<string, { kind: string; status: string }>();

  constructor(
    private readonly metrics: Metrics,
    private readonly tasks: AdminTaskListService,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.metrics.gauge(
      'svc_tasks_last_hour',
      'Tasks created in the last hour, by kind and status (counted at most every 10 s; a lower bound where svc_tasks_last_hour_capped is 1)',
      ['kind', 'status'],
      async (gauge) => {
        const counts = await this.countsOrNull();
        if (!counts) return; // the last values stay
        const now = new Map(counts.counts.map((row) => [`${row.kind}\u0000${row.status}`, row]));
        for (const [key, row] of now) this.seen.set(key, { kind: row.kind, status: row.status });
        for (const [key, labels] of this.seen) gauge.set(labels, now.get(key)?.count ?? 0);
      },
    );
    this.metrics.gauge(
      'svc_tasks_last_hour_capped',
      'Task kinds with more tasks in the last hour than one count reads (1: their svc_tasks_last_hour is a lower bound)',
      ['kind'],
      async (gauge) => {
        const counts = await this.countsOrNull();
        if (!counts) return;
        for (const kind of this.tasks.kinds()) gauge.set({ kind }, counts.cappedKinds.includes(kind) ? 1 : 0);
      },
    );
  }

  /** The last hour's counts, read at most once per TASK_COUNTS_TTL_MS; a failed read is not kept. */
  counts(): Promise<TaskCounts> {
    const now = this.clock.now().getTime();
    if (!this.cached || now - this.cached.at >= TASK_COUNTS_TTL_MS || now < this.cached.at) {
      const counts = this.tasks.countSince(new Date(now - HOUR_MS));
      this.cached = { at: now, counts };
      counts.catch(() => {
        if (this.cached?.counts === counts) this.cached = undefined;
      });
    }
    return this.cached.counts;
  }

  /** A scrape still answers when the database does not: these gauges keep their last values. */
  private async countsOrNull(): Promise<TaskCounts | null> {
    try {
      return await this.counts();
    } catch (error) {
      this.logger.warn(`svc_tasks_last_hour not refreshed: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }
}
