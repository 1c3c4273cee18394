import { Injectable, Logger } from '@nestjs/common';
import type { Job, JobsOptions } from 'bullmq';
import type { JobName, JobOf, QueueName } from './queue-names.js';
import { Queues } from './queues.js';

/** One non-terminal unit of work as PostgreSQL knows it, and the job that should carry it. */
export interface PendingWork<N extends JobName = JobName> {
  queue: QueueName;
  jobName: N;
  jobId: string;
  data: JobOf<N>;
  /** The options the job was first enqueued with (attempts, backoff), so a re-enqueued job behaves the same. */
  options?: JobsOptions;
}

/** A domain's view of its unfinished work (e.g. video tasks not yet terminal). */
export interface WorkSource {
  name: string;
  findPending(): Promise<PendingWork[]>;
}

export interface ReconcileReport {
  checked: number;
  enqueued: number;
}

const workKey = (work: PendingWork): string => `${work.queue}\u0000${work.jobId}`;

/**
 * PostgreSQL is the truth, Redis only moves work (DESIGN §6). On boot and periodically, every
 * non-terminal unit whose job is missing — Redis flushed or restarted, a job removed, a job
 * that ended while its row did not — is enqueued again under its deterministic id. Processors
 * are idempotent, so a unit that was merely slow is not harmed by this.
 *
 * The pending list is read before the jobs are looked at, so a job can finish (and its row
 * become terminal) in between: its row then looks pending only in our stale read. Units whose
 * job is missing or finished are therefore read again after the job was seen, and only those
 * still pending then are enqueued; otherwise every reconcile racing a completion would run that
 * unit a second time.
 */
@Injectable()
export class WorkReconciler {
  private readonly logger = new Logger(WorkReconciler.name);
  private readonly sources: WorkSource[] = [];

  constructor(private readonly queues: Queues) {}

  register(source: WorkSource): void {
    this.sources.push(source);
  }

  async reconcile(): Promise<ReconcileReport> {
    const report: ReconcileReport = { checked: 0, enqueued: 0 };
    for (const source of this.sources) {
      const suspects: Array<{ work: PendingWork; finished?: Job }> = [];
      for (const work of await source.findPending()) {
        report.checked++;
        const job = await this.queues.getJob(work.queue, work.jobId);
        if (!job) {
          suspects.push({ work });
          continue;
        }
        const state = await job.getState();
        // A finished job under this id while the row is still pending: the row is the truth.
        if (state === 'completed' || state === 'failed') suspects.push({ work, finished: job });
      }
      if (suspects.length === 0) continue;

      const stillPending = new Set((await source.findPending()).map(workKey));
      for (const { work, finished } of suspects) {
        if (!stillPending.has(workKey(work))) continue;
        if (finished) await finished.remove();
        await this.queues.add(work.queue, work.jobName, work.data, work.jobId, work.options);
        report.enqueued++;
      }
    }
    if (report.enqueued > 0) this.logger.warn(`re-enqueued ${report.enqueued} of ${report.checked} pending units whose job was missing`);
    return report;
  }
}
