import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Clock } from '../../../libs/common/index.js';
import {
  mp4DurationSeconds,
  type PreparedAsset,
  type VideoJobSpec,
  type VideoProvider,
  ProviderRegistry,
  VideoDownloadError,
} from '../../../libs/providers/index.js';
import { PriceCatalogue, type VideoModel } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import { MediaService } from '../media/media.service.js';
import { InvalidMediaError, VideoMediaValidator } from './video-media.validator.js';
import { VIDEO_RETENTION_MS } from './video.constants.js';
import { TERMINAL_STATUSES, type VideoTaskEntity, type VideoTaskPhase } from './video-task.entity.js';
import { VideoTaskRepository } from './video-task.repository.js';

export type RunResult = { kind: 'done' } | { kind: 'wait'; ms: number };
type Step = RunResult | { kind: 'continue' };

/** A submit the upstream answered "not accepted" to (429, 500, 503) is tried this many times in all. */
export const MAX_SUBMIT_ATTEMPTS = 5;
/** Consecutive failed polls (network, 5xx) before the task fails. */
export const MAX_POLL_ERRORS = 10;
/** An accepted generation that has not finished after this long fails (released). */
export const MAX_GENERATION_MS = 60 * 60_000;
/** A finished video that could not be fetched from the upstream for this long fails (released). */
export const MAX_STORING_MS = 60 * 60_000;
/** The stored object outlives the task's retention deadline by this much (the sweep removes both). */
const MEDIA_EXPIRY_MARGIN_MS = 60 * 60_000;

const ACTIVE = ['queued', 'running'] as const;

export const videoMediaKey = (task: Pick<VideoTaskEntity, 'workspaceId' | 'id'>): string =>
  `video/${task.workspaceId}/${task.id.slice('omni:'.length)}.mp4`;

/**
 * The worker's state machine for one task (DESIGN §6). Every step reads the row, does one
 * thing and moves the row with a compare-and-set, so a killed worker, a duplicate job or a
 * re-enqueue after a Redis flush resumes from the row and never repeats a side effect that
 * matters: a submit is sent only by the run that moved the task into `submitting`; a task
 * found in `submitting` (its answer lost with the worker) goes to reconciliation; storing the
 * media replaces the same key and settling a hold twice changes nothing.
 */
@Injectable()
export class VideoTaskRunner {
  private readonly logger = new Logger(VideoTaskRunner.name);

  constructor(
    private readonly tasks: VideoTaskRepository,
    private readonly validator: VideoMediaValidator,
    private readonly registry: ProviderRegistry,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly media: MediaService,
    private readonly clock: Clock,
  ) {}

  /** Advances the task until it is terminal or has to wait; `wait.ms` is when to come back. */
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

  private async step(task: VideoTaskEntity): Promise<Step> {
    // A task keeps the adapter chosen at creation: credentials or routes may have changed since.
    const provider = this.registry.get<VideoProvider>('video', task.adapter);
    switch (task.phase) {
      case null:
        await this.tasks.transition(task.id, { status: ['queued'], phase: [null] }, { status: 'running', phase: 'validating', updatedAt: this.clock.now() });
        return { kind: 'continue' };
      case 'validating':
        return this.validateAndSubmit(task, provider);
      case 'submitting':
        // Found here by a new run: whoever sent it lost the answer (or died before sending). Never resend.
        await this.tasks.transition(task.id, { phase: ['submitting'], status: ['running'] }, { phase: 'reconciliationRequired', updatedAt: this.clock.now() });
        return { kind: 'wait', ms: provider.reconcileDelayMs };
      case 'reconciliationRequired':
        return this.reconcile(task, provider);
      case 'generating':
        return this.poll(task, provider);
      case 'storing':
        return this.store(task, provider);
      case 'failing':
        return this.finishFailure(task);
    }
  }

  private async validateAndSubmit(task: VideoTaskEntity, provider: VideoProvider): Promise<Step> {
    let assets: PreparedAsset[];
    try {
      assets = await this.validator.prepare(task.workspaceId, task.request);
    } catch (error) {
      if (error instanceof InvalidMediaError) return this.fail(task, ['validating'], error.message);
      throw error;
    }
    const now = this.clock.now();
    const attempt = task.submitAttempts + 1;
    const won = await this.tasks.transition(
      task.id,
      { phase: ['validating'], status: ['running'] },
      { phase: 'submitting', submitAttempts: attempt, submittedAt: now, updatedAt: now },
    );
    if (!won) return { kind: 'continue' };
    const outcome = await provider.submit({ ...spec(task), assets }).catch((error: unknown) => ({
      kind: 'uncertain' as const,
      reason: `submit raised ${String(error)}`,
    }));
    switch (outcome.kind) {
      case 'accepted':
        await this.accept(task, ['submitting', 'reconciliationRequired'], outcome.operation, null);
        return { kind: 'continue' };
      case 'rejected':
        if (outcome.retryable && attempt < MAX_SUBMIT_ATTEMPTS) {
          await this.tasks.transition(task.id, { phase: ['submitting'] }, { phase: 'validating', updatedAt: this.clock.now() });
          return { kind: 'wait', ms: Math.max(outcome.retryAfterMs ?? 0, 1000 * 2 ** (attempt - 1)) };
        }
        return this.fail({ ...task, phase: 'submitting' }, ['submitting'], outcome.reason);
      case 'uncertain':
        this.logger.warn(`task ${task.id}: acceptance uncertain (${outcome.reason}); reconciling`);
        await this.tasks.transition(task.id, { phase: ['submitting'] }, { phase: 'reconciliationRequired', updatedAt: this.clock.now() });
        return { kind: 'wait', ms: provider.reconcileDelayMs };
    }
  }

  private async accept(task: VideoTaskEntity, from: VideoTaskPhase[], operation: string, reconciledAt: Date | null): Promise<void> {
    await this.tasks.transition(
      task.id,
      { phase: from, status: ['running'], operationIsNull: true },
      { phase: 'generating', upstreamOperation: operation, pollAttempts: 0, pollErrors: 0, updatedAt: this.clock.now(), ...(reconciledAt ? { reconciledAt } : {}) },
    );
  }

  private async reconcile(task: VideoTaskEntity, provider: VideoProvider): Promise<Step> {
    const submittedAt = task.submittedAt ?? task.createdAt;
    const outcome = await provider.lookup(spec(task), submittedAt);
    if (outcome.kind === 'found') {
      await this.accept(task, ['reconciliationRequired'], outcome.operation, this.clock.now());
      return { kind: 'continue' };
    }
    if (this.clock.now().getTime() - submittedAt.getTime() > provider.reconcileGiveUpMs) {
      return this.fail(
        task,
        ['reconciliationRequired'],
        'the upstream never confirmed that it accepted the generation; nothing was charged, create a new task',
      );
    }
    return { kind: 'wait', ms: outcome.retryAfterMs ?? 30_000 };
  }

  private async poll(task: VideoTaskEntity, provider: VideoProvider): Promise<Step> {
    const outcome = await provider.poll(task.upstreamOperation!, spec(task), task.pollAttempts);
    const now = this.clock.now();
    switch (outcome.kind) {
      case 'running': {
        if (now.getTime() - (task.submittedAt ?? task.createdAt).getTime() > MAX_GENERATION_MS) {
          return this.fail(task, ['generating'], 'the upstream did not finish the video in time');
        }
        await this.tasks.transition(task.id, { phase: ['generating'] }, { pollAttempts: task.pollAttempts + 1, pollErrors: 0, updatedAt: now });
        return { kind: 'wait', ms: outcome.retryAfterMs ?? 5000 };
      }
      case 'succeeded':
        await this.tasks.transition(task.id, { phase: ['generating'], status: ['running'] }, { phase: 'storing', updatedAt: now });
        return { kind: 'continue' };
      case 'failed':
        return this.fail(task, ['generating'], outcome.reason);
      case 'error':
        if (!outcome.retryable || task.pollErrors + 1 >= MAX_POLL_ERRORS) return this.fail(task, ['generating'], outcome.reason);
        await this.tasks.transition(task.id, { phase: ['generating'] }, { pollErrors: task.pollErrors + 1, updatedAt: now });
        return { kind: 'wait', ms: outcome.retryAfterMs ?? 5000 };
    }
  }

  /**
   * Download, measure and store the video, and record that on the row; then settle and finish.
   * Once the row holds the media key, a re-run (worker killed after storing or after settling)
   * goes straight to the idempotent settlement: it never asks the upstream again, so an upstream
   * that has forgotten the operation by then cannot fail a task whose charge is already taken.
   */
  private async store(task: VideoTaskEntity, provider: VideoProvider): Promise<Step> {
    if (task.mediaKey !== null && task.outputSeconds !== null) return this.settleAndFinish(task);
    // updatedAt is when the task entered `storing`: waiting for a retry does not move it.
    if (this.clock.now().getTime() - task.updatedAt.getTime() > MAX_STORING_MS) {
      return this.fail(task, ['storing'], 'the finished video could not be fetched from the upstream');
    }
    const outcome = await provider.poll(task.upstreamOperation!, spec(task), 0);
    if (outcome.kind === 'failed') return this.fail(task, ['storing'], outcome.reason);
    if (outcome.kind !== 'succeeded') return { kind: 'wait', ms: 'retryAfterMs' in outcome ? (outcome.retryAfterMs ?? 5000) : 5000 };
    const path = join(tmpdir(), `svc-video-${randomUUID()}.mp4`);
    try {
      try {
        await provider.download(outcome.output, spec(task), path);
      } catch (error) {
        if (error instanceof VideoDownloadError && !error.retryable) return this.fail(task, ['storing'], error.message);
        if (error instanceof VideoDownloadError) {
          this.logger.warn(`task ${task.id}: ${error.message}; retrying`);
          return { kind: 'wait', ms: 5000 };
        }
        throw error;
      }
      const seconds = mp4DurationSeconds(await readFile(path));
      if (seconds === null || seconds <= 0) return this.fail(task, ['storing'], 'the upstream returned a video that could not be read');
      const key = videoMediaKey(task);
      // The retention clock starts when the task completes, just after this; the object outlives
      // that deadline by a margin and the retention sweep deletes it with the task's outputs.
      const mediaExpiresAt = new Date(this.clock.now().getTime() + VIDEO_RETENTION_MS + MEDIA_EXPIRY_MARGIN_MS);
      const stored = await this.media.store({ key, body: { path }, contentType: 'video/mp4', workspaceId: task.workspaceId, expiresAt: mediaExpiresAt });
      await this.tasks.transition(
        task.id,
        { phase: ['storing'], status: ['running'] },
        { mediaKey: key, mediaBytes: BigInt(stored.bytes), outputSeconds: seconds, updatedAt: this.clock.now() },
      );
      return { kind: 'continue' };
    } finally {
      await unlink(path).catch(() => undefined);
    }
  }

  private async settleAndFinish(task: VideoTaskEntity): Promise<Step> {
    const model = task.model as VideoModel;
    const billedSeconds = billableSeconds(task.outputSeconds!, this.prices.videoMaxOutputSeconds(model));
    // Priced for the task's own workspace and key (the row carries them), as its hold was.
    const resolution = await this.wallet.settle(task.holdId, this.prices.videoCost(task, model, task.request.controls.resolution, billedSeconds));
    // Completion: the video is stored and charged. Retention (seven days) counts from here.
    const now = this.clock.now();
    await this.tasks.transition(
      task.id,
      { phase: ['storing'], status: ['running'] },
      {
        status: 'succeeded',
        phase: null,
        chargedMicros: resolution.capturedMicros,
        completedAt: now,
        expiresAt: new Date(now.getTime() + VIDEO_RETENTION_MS),
        updatedAt: now,
      },
    );
    return { kind: 'done' };
  }

  /** Records the reason first, then releases, then ends the task: a crash in between resumes in `failing`. */
  private async fail(task: VideoTaskEntity, from: VideoTaskPhase[], reason: string): Promise<Step> {
    const won = await this.tasks.transition(
      task.id,
      { phase: from, status: [...ACTIVE] },
      { phase: 'failing', failureReason: reason.slice(0, 1000), updatedAt: this.clock.now() },
    );
    if (!won) return { kind: 'continue' };
    return this.finishFailure(task);
  }

  private async finishFailure(task: VideoTaskEntity): Promise<Step> {
    await this.wallet.release(task.holdId);
    const now = this.clock.now();
    await this.tasks.transition(task.id, { phase: ['failing'] }, { status: 'failed', phase: null, completedAt: now, updatedAt: now });
    return { kind: 'done' };
  }
}

/**
 * Seconds billed for a measured video: to the nearest tenth of a second (container padding of an
 * audio frame is not billed), never more than the longest output the hold covers.
 */
export function billableSeconds(measured: number, maxOutputSeconds: number): number {
  return Math.min(Math.round(measured * 10) / 10, maxOutputSeconds);
}

function spec(task: VideoTaskEntity): VideoJobSpec {
  return {
    taskId: task.id,
    model: task.model,
    mode: task.mode,
    prompt: task.request.prompt,
    durationSeconds: task.request.controls.duration,
    resolution: task.request.controls.resolution,
    ratio: task.request.controls.ratio,
  };
}
