import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Clock } from '../../../libs/common/index.js';
import {
  ALTERNATE_VIDEO_CAPABILITY,
  AlternateDownloadError,
  type AlternateJobSpec,
  type AlternateVideoProvider,
  mp4DurationSeconds,
  ProviderRegistry,
} from '../../../libs/providers/index.js';
import { type AlternateVideoModel, PriceCatalogue } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import { MediaService } from '../media/media.service.js';
import { ALTERNATE_MAX_VIDEO_BYTES, ALTERNATE_RETENTION_MS } from './alternate.constants.js';
import { AlternateMetrics } from './alternate-metrics.js';
import { type AlternateTaskEntity, TERMINAL_STATUSES } from './alternate-task.entity.js';
import { AlternateTaskProgress, NO_VIDEO_REASON } from './alternate-task.progress.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';

export type RunResult = { kind: 'done' } | { kind: 'wait'; ms: number };
type Step = RunResult | { kind: 'continue' };

/** A task still `creating` this long after its create was sent lost its API request (crash): it is looked up. */
export const CREATING_GRACE_MS = 90_000;
/** Consecutive failed polls before the task fails. */
export const MAX_POLL_ERRORS = 10;
/** An accepted task that has not finished after this long fails (released; the remote task is not cancelled). */
export const MAX_GENERATION_MS = 60 * 60_000;
/** A finished video that could not be fetched for this long fails (released). */
export const MAX_STORING_MS = 60 * 60_000;
const MEDIA_EXPIRY_MARGIN_MS = 60 * 60_000;

export const alternateMediaKey = (task: Pick<AlternateTaskEntity, 'workspaceId' | 'id'>): string =>
  `alternate/${task.workspaceId}/${task.id.slice('alt:'.length)}.mp4`;

export function alternateSpec(task: AlternateTaskEntity): AlternateJobSpec {
  return {
    taskId: task.id,
    model: task.model,
    kind: task.request.kind,
    prompt: task.request.prompt,
    durationSeconds: task.durationSeconds,
    aspectRatio: task.request.aspectRatio,
    mode: task.mode,
  };
}

/**
 * Seconds billed for a measured video: to the nearest tenth (container padding is not billed),
 * never more than the duration asked for (what the hold covers).
 */
export function billableSeconds(measured: number, requested: number): number {
  return Math.min(Math.round(measured * 10) / 10, requested);
}

/**
 * The worker's side of an alternate task (DESIGN §6): it never creates (the API did that,
 * synchronously). It looks a lost create up by our id, polls until the upstream reports a
 * terminal result (handed to the shared transition, AlternateTaskProgress), and in `storing`
 * downloads, measures, stores and settles. Every step re-reads the row and moves it with a
 * compare-and-set, so a killed worker, a duplicate job or a re-enqueue resumes from the row.
 */
@Injectable()
export class AlternateTaskRunner {
  private readonly logger = new Logger(AlternateTaskRunner.name);

  constructor(
    private readonly tasks: AlternateTaskRepository,
    private readonly progress: AlternateTaskProgress,
    private readonly registry: ProviderRegistry,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly media: MediaService,
    private readonly metrics: AlternateMetrics,
    private readonly clock: Clock,
  ) {}

  async run(taskId: string): Promise<RunResult> {
    for (let i = 0; i < 25; i++) {
      const task = await this.tasks.findById(taskId);
      if (!task || TERMINAL_STATUSES.includes(task.status)) return { kind: 'done' };
      const step = await this.step(task);
      if (step.kind === 'done') return step;
      if (step.kind === 'wait' && step.ms > 0) return step;
    }
    return { kind: 'wait', ms: 1000 };
  }

  private async step(task: AlternateTaskEntity): Promise<Step> {
    const provider = this.registry.get<AlternateVideoProvider>(ALTERNATE_VIDEO_CAPABILITY, task.adapter);
    const now = this.clock.now();
    switch (task.phase) {
      case null:
      case 'creating': {
        // The API request that sends the create owns the task until it answers; past the grace
        // period it died with the answer: look the task up, never create again.
        const waited = now.getTime() - task.updatedAt.getTime();
        if (waited < CREATING_GRACE_MS) return { kind: 'wait', ms: CREATING_GRACE_MS - waited };
        await this.tasks.transition(task.id, { phase: ['creating', null], status: ['queued'] }, { phase: 'reconciliationRequired', updatedAt: now });
        return { kind: 'continue' };
      }
      case 'reconciliationRequired':
        return this.reconcile(task, provider);
      case 'generating':
        return this.poll(task, provider);
      case 'storing':
        return this.store(task, provider);
      case 'failing':
        await this.progress.finishFailure(task);
        return { kind: 'done' };
    }
  }

  private async reconcile(task: AlternateTaskEntity, provider: AlternateVideoProvider): Promise<Step> {
    const outcome = await provider.queryByExternalId(alternateSpec(task));
    if (outcome.kind === 'found') {
      await this.tasks.transition(task.id, { phase: ['reconciliationRequired'] }, { reconciledAt: this.clock.now() });
      const changed = await this.progress.observe(task, outcome.task, 'lookup');
      if (!changed) this.logger.warn(`task ${task.id}: lookup found ${outcome.task.upstreamTaskId} but changed nothing`);
      return { kind: 'continue' };
    }
    const submittedAt = task.submittedAt ?? task.createdAt;
    if (this.clock.now().getTime() - submittedAt.getTime() > provider.reconcileGiveUpMs) {
      await this.progress.fail(task, 'the video provider never confirmed that it created the task; nothing was charged, create a new task', 'worker');
      return { kind: 'done' };
    }
    return { kind: 'wait', ms: outcome.kind === 'error' ? (outcome.retryAfterMs ?? 10_000) : Math.max(provider.reconcileDelayMs, 1000) };
  }

  private async poll(task: AlternateTaskEntity, provider: AlternateVideoProvider): Promise<Step> {
    const spec = alternateSpec(task);
    const outcome = await provider.query(spec, task.upstreamTaskId!);
    const now = this.clock.now();
    const submittedAt = task.submittedAt ?? task.createdAt;
    switch (outcome.kind) {
      case 'found': {
        await this.progress.observe(task, outcome.task, 'poll');
        if (outcome.task.status === 'succeed' || outcome.task.status === 'failed') return { kind: 'continue' };
        if (now.getTime() - submittedAt.getTime() > MAX_GENERATION_MS) {
          await this.progress.fail(task, 'the video provider did not finish the video in time', 'worker');
          return { kind: 'done' };
        }
        // Lost when a callback moved the task meanwhile: go on from the new row at once.
        const counted = await this.tasks.transition(task.id, { phase: ['generating'] }, { pollAttempts: task.pollAttempts + 1, pollErrors: 0 });
        return counted ? { kind: 'wait', ms: provider.pollDelayMs(spec, task.pollAttempts + 1, submittedAt) } : { kind: 'continue' };
      }
      case 'not_found':
        await this.progress.fail(task, 'the video provider no longer knows the task', 'worker');
        return { kind: 'done' };
      case 'error': {
        if (!outcome.retryable || task.pollErrors + 1 >= MAX_POLL_ERRORS) {
          this.logger.warn(`task ${task.id}: ${outcome.reason}`);
          await this.progress.fail(task, 'the video provider could not be queried for the task', 'worker');
          return { kind: 'done' };
        }
        const counted = await this.tasks.transition(task.id, { phase: ['generating'] }, { pollErrors: task.pollErrors + 1 });
        return counted ? { kind: 'wait', ms: outcome.retryAfterMs ?? provider.pollDelayMs(spec, task.pollAttempts, submittedAt) } : { kind: 'continue' };
      }
    }
  }

  /**
   * Download, measure, store, record; then settle and finish. Once the row holds the media key, a
   * re-run goes straight to the idempotent settlement; a crash before that re-downloads and
   * overwrites the same key: one video, one charge.
   */
  private async store(task: AlternateTaskEntity, provider: AlternateVideoProvider): Promise<Step> {
    if (task.mediaKey !== null && task.outputSeconds !== null) return this.settleAndFinish(task);
    if (this.clock.now().getTime() - task.updatedAt.getTime() > MAX_STORING_MS) {
      await this.progress.fail(task, 'the finished video could not be fetched from the video provider', 'worker');
      return { kind: 'done' };
    }
    const spec = alternateSpec(task);
    if (task.resultUrl === null) return this.locateVideo(task, provider);
    const path = join(tmpdir(), `svc-alternate-${randomUUID()}.mp4`);
    try {
      try {
        await provider.download(task.resultUrl!, spec, path, ALTERNATE_MAX_VIDEO_BYTES);
      } catch (error) {
        if (!(error instanceof AlternateDownloadError)) throw error;
        this.logger.warn(`task ${task.id}: ${error.message}${error.retryable ? '; retrying' : ''}`);
        if (error.retryable) return { kind: 'wait', ms: 5000 };
        await this.progress.fail(task, 'the finished video could not be fetched from the video provider', 'worker');
        return { kind: 'done' };
      }
      const seconds = mp4DurationSeconds(await readFile(path));
      if (seconds === null || seconds <= 0) {
        await this.progress.fail(task, 'the video provider returned a video that could not be read', 'worker');
        return { kind: 'done' };
      }
      const key = alternateMediaKey(task);
      const expiresAt = new Date(this.clock.now().getTime() + ALTERNATE_RETENTION_MS + MEDIA_EXPIRY_MARGIN_MS);
      const stored = await this.media.store({ key, body: { path }, contentType: 'video/mp4', workspaceId: task.workspaceId, expiresAt });
      // updatedAt stays the moment the task entered `storing` (the storing deadline counts from it).
      await this.tasks.transition(task.id, { phase: ['storing'], status: ['running'] }, { mediaKey: key, mediaBytes: BigInt(stored.bytes), outputSeconds: seconds });
      return { kind: 'continue' };
    } finally {
      await unlink(path).catch(() => undefined);
    }
  }

  /**
   * A callback said `succeed` without the video's location: ask the upstream for it. If the
   * upstream says the task is still going (the callback came before its query answers caught
   * up), the task goes back to polling: the video is not given up for an early callback.
   */
  private async locateVideo(task: AlternateTaskEntity, provider: AlternateVideoProvider): Promise<Step> {
    const outcome = await provider.query(alternateSpec(task), task.upstreamTaskId!);
    if (outcome.kind === 'found' && outcome.task.status === 'succeed' && outcome.task.videoUrl) {
      await this.tasks.transition(task.id, { phase: ['storing'], status: ['running'] }, { resultUrl: outcome.task.videoUrl.slice(0, 4096) });
      return { kind: 'continue' };
    }
    if (outcome.kind === 'found' && outcome.task.status !== 'succeed') {
      // `failed` included: polling observes it and fails the task with the upstream's own reason.
      this.logger.warn(`task ${task.id}: a succeed callback came without a video and the upstream says ${outcome.task.status}; polling again`);
      await this.tasks.transition(task.id, { phase: ['storing'], status: ['running'] }, { phase: 'generating', upstreamStatus: outcome.task.status, updatedAt: this.clock.now() });
      return { kind: 'continue' };
    }
    if (outcome.kind === 'error' && outcome.retryable) return { kind: 'wait', ms: outcome.retryAfterMs ?? 5000 };
    await this.progress.fail(task, outcome.kind === 'not_found' ? 'the video provider no longer knows the task' : NO_VIDEO_REASON, 'worker');
    return { kind: 'done' };
  }

  private async settleAndFinish(task: AlternateTaskEntity): Promise<Step> {
    const billed = billableSeconds(task.outputSeconds!, task.durationSeconds);
    const cost = this.prices.alternateVideoCost(task, task.model as AlternateVideoModel, task.mode, billed);
    const resolution = await this.wallet.settle(task.holdId, cost);
    const now = this.clock.now();
    const done = await this.tasks.transition(
      task.id,
      { phase: ['storing'], status: ['running'] },
      { status: 'succeeded', phase: null, chargedMicros: resolution.capturedMicros, completedAt: now, expiresAt: new Date(now.getTime() + ALTERNATE_RETENTION_MS), updatedAt: now },
    );
    if (done) this.metrics.ended(task.model, 'succeeded');
    return { kind: 'done' };
  }
}
