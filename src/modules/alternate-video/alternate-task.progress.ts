import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import type { AlternateObservation } from '../../../libs/providers/index.js';
import { Queues } from '../../queue/queues.js';
import { WalletService } from '../billing/wallet.service.js';
import { ALTERNATE_JOB_OPTIONS, ALTERNATE_PROCESS_JOB, ALTERNATE_QUEUE, alternateJobId } from './alternate-jobs.js';
import { AlternateMetrics } from './alternate-metrics.js';
import { type AlternateTaskEntity, type AlternateTaskPhase, ACTIVE_STATUSES } from './alternate-task.entity.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';

/** Which path read the upstream: the API's create, the worker's lookup or poll, or a callback. */
export type ObservationSource = 'create' | 'lookup' | 'poll' | 'callback';

/** Phases in which a reading of the upstream may still move the task. */
const OBSERVING: readonly AlternateTaskPhase[] = ['creating', 'reconciliationRequired', 'generating'];

/** Fixed reason of an upstream `failed` (the upstream's message text is logged, never shown). */
export const UPSTREAM_FAILED_REASON = 'the video provider failed to generate the video';
export const NO_VIDEO_REASON = 'the video provider finished without returning a video';

/**
 * The one transition function of an alternate task (spec, Events › Video and alternate provider):
 * the create, the worker's polls and lookups, and callbacks all hand what they read of the
 * upstream task to `observe`. Every change is a compare-and-set on the row's phase (and on its
 * upstream task id), so whichever path sees the terminal result first moves the task and the
 * others change nothing: a success moves it to `storing` exactly once (the worker then downloads,
 * measures and settles), a failure records the reason, releases the hold and ends it once.
 */
@Injectable()
export class AlternateTaskProgress {
  private readonly logger = new Logger(AlternateTaskProgress.name);

  constructor(
    private readonly tasks: AlternateTaskRepository,
    private readonly wallet: WalletService,
    private readonly queues: Queues,
    private readonly metrics: AlternateMetrics,
    private readonly clock: Clock,
  ) {}

  /** Applies one reading of the upstream task; true when it changed the row. */
  async observe(task: AlternateTaskEntity, seen: AlternateObservation, source: ObservationSource): Promise<boolean> {
    if (!ACTIVE_STATUSES.includes(task.status) || task.phase === null || !OBSERVING.includes(task.phase)) return false;
    if (task.upstreamTaskId !== null && task.upstreamTaskId !== seen.upstreamTaskId) {
      this.logger.warn(`task ${task.id}: ${source} reported upstream task ${seen.upstreamTaskId}, the task is ${task.upstreamTaskId}; ignored`);
      return false;
    }
    const guard = { status: ACTIVE_STATUSES, phase: OBSERVING, upstreamIs: seen.upstreamTaskId };
    const now = this.clock.now();
    switch (seen.status) {
      case 'submitted':
      case 'processing': {
        const status = seen.status === 'processing' ? 'running' : task.status;
        if (task.phase === 'generating' && task.status === status && task.upstreamTaskId !== null) return false;
        // Forward only: a late `submitted` never moves a running task back to queued.
        const forward = status === 'running' ? guard : { ...guard, status: ['queued' as const] };
        return this.tasks.transition(task.id, forward, { phase: 'generating', status, upstreamTaskId: seen.upstreamTaskId, upstreamStatus: seen.status, updatedAt: now });
      }
      case 'succeed': {
        // A query answer without a video is final; a callback without one leaves the worker to
        // ask the upstream for the video's location.
        if (!seen.videoUrl && source !== 'callback') return this.fail(task, NO_VIDEO_REASON, source);
        const won = await this.tasks.transition(task.id, guard, {
          phase: 'storing',
          status: 'running',
          upstreamTaskId: seen.upstreamTaskId,
          upstreamStatus: 'succeed',
          resultUrl: seen.videoUrl ? seen.videoUrl.slice(0, 4096) : null,
          updatedAt: now,
        });
        if (won) {
          this.metrics.terminalFirst(source);
          // The worker stores the video; a job waiting for its next poll is woken now.
          if (source !== 'poll' && source !== 'lookup') await this.wake(task.id);
        }
        return won;
      }
      case 'failed':
        if (seen.message) this.logger.warn(`task ${task.id}: upstream failed: ${seen.message}`);
        return this.fail(task, UPSTREAM_FAILED_REASON, source, seen.upstreamTaskId);
    }
  }

  /** Records the reason, releases the hold, ends the task; each step a compare-and-set (a crash resumes in `failing`). */
  async fail(task: AlternateTaskEntity, reason: string, source: ObservationSource | 'worker', upstreamTaskId?: string): Promise<boolean> {
    const won = await this.tasks.transition(
      task.id,
      { status: ACTIVE_STATUSES, phase: [...OBSERVING, 'storing'], ...(upstreamTaskId ? { upstreamIs: upstreamTaskId } : {}) },
      { phase: 'failing', failureReason: reason.slice(0, 1000), updatedAt: this.clock.now(), ...(upstreamTaskId ? { upstreamTaskId, upstreamStatus: 'failed' } : {}) },
    );
    if (!won) return false;
    if (source !== 'worker') this.metrics.terminalFirst(source);
    await this.finishFailure(task);
    return true;
  }

  async finishFailure(task: AlternateTaskEntity): Promise<void> {
    await this.wallet.release(task.holdId);
    const now = this.clock.now();
    if (await this.tasks.transition(task.id, { phase: ['failing'] }, { status: 'failed', phase: null, completedAt: now, updatedAt: now })) {
      this.metrics.ended(task.model, 'failed');
    }
  }

  /** Makes the task's job run now: promoted from the delayed set, or enqueued again. */
  async wake(taskId: string, delayMs = 0): Promise<void> {
    try {
      const job = await this.queues.getJob(ALTERNATE_QUEUE, alternateJobId(taskId));
      if (job) {
        const state = await job.getState();
        if (state === 'delayed' && delayMs === 0) {
          await job.promote().catch(() => undefined);
          return;
        }
        if (state !== 'completed' && state !== 'failed') return;
        await job.remove().catch(() => undefined);
      }
      await this.queues.add(ALTERNATE_QUEUE, ALTERNATE_PROCESS_JOB, { taskId }, alternateJobId(taskId), { ...ALTERNATE_JOB_OPTIONS, ...(delayMs > 0 ? { delay: delayMs } : {}) });
    } catch (error) {
      // The row is committed: the reconciler enqueues the task once Redis answers again.
      this.logger.error(`enqueue of ${taskId} failed; the reconciler will retry: ${String(error)}`);
    }
  }
}
