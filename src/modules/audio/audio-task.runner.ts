import { Injectable, Logger } from '@nestjs/common';
import { Clock, microsToUsd } from '../../../libs/common/index.js';
import { AUDIO_CONTENT_TYPES, type AudioProvider, ProviderRegistry, type SpeechJobSpec } from '../../../libs/providers/index.js';
import { PriceCatalogue } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import { MediaService } from '../media/media.service.js';
import { AUDIO_MEDIA_EXPIRY_MARGIN_MS, AUDIO_RETENTION_MS } from './audio.constants.js';
import { AUDIO_FILE_EXTENSIONS, audioSeconds } from './audio-duration.js';
import { AUDIO_TERMINAL_STATUSES, type AudioTaskEntity, type AudioTaskPhase } from './audio-task.entity.js';
import { AudioTaskEvents } from './audio-task-events.js';
import { AudioTaskRepository } from './audio-task.repository.js';

export type AudioRunResult = { kind: 'done' } | { kind: 'wait'; ms: number };
type Step = AudioRunResult | { kind: 'continue' };

/** A synthesis the upstream answered "not accepted, try again" (429, 5xx) is tried this many times in all. */
export const MAX_SYNTHESIS_ATTEMPTS = 5;

/** Where the audio of a task is stored: one key per task, so storing twice replaces the same file. */
export const audioMediaKey = (task: Pick<AudioTaskEntity, 'workspaceId' | 'id' | 'request'>): string =>
  `audio/${task.workspaceId}/${task.id.slice('audio:'.length)}.${AUDIO_FILE_EXTENSIONS[task.request.outputFormat]}`;

/** What the adapter is asked for: rebuilt from the row, so every run asks the same. */
export const speechSpecOf = (task: AudioTaskEntity): SpeechJobSpec => ({
  taskId: task.id,
  model: task.model,
  mode: task.mode,
  inputs: task.request.inputs,
  outputFormat: task.request.outputFormat,
  ...(task.request.languageCode !== undefined ? { languageCode: task.request.languageCode } : {}),
  ...(task.request.seed !== undefined ? { seed: task.request.seed } : {}),
  ...(task.request.applyTextNormalization !== undefined ? { applyTextNormalization: task.request.applyTextNormalization } : {}),
});

/** Phases from which a task may finish with audio in hand. */
const FINISHABLE: AudioTaskPhase[] = ['synthesizing', 'streaming', 'reconciliationRequired', 'storing'];

/** A run that finds a live stream comes back this long after its lease would end. */
const LEASE_CHECK_MARGIN_MS = 500;

/**
 * The worker's state machine for one audio task (DESIGN §6). Every step reads the row, does one
 * thing and moves the row with a compare-and-set, so a killed worker, a duplicate job or a
 * re-enqueue after a Redis flush resumes from the row: the upstream is called only by the run
 * that moved the task into `synthesizing`; a run that finds it there (the caller died or lost
 * the answer) reconciles instead of calling again; storing replaces the same key; settling a
 * hold twice changes nothing; the terminal transition happens once, with its event.
 */
@Injectable()
export class AudioTaskRunner {
  private readonly logger = new Logger(AudioTaskRunner.name);

  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly registry: ProviderRegistry,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly media: MediaService,
    private readonly events: AudioTaskEvents,
    private readonly clock: Clock,
  ) {}

  /** Advances the task until it is terminal or has to wait; `wait.ms` is when to come back. */
  async run(taskId: string): Promise<AudioRunResult> {
    for (let i = 0; i < 20; i++) {
      const task = await this.tasks.findById(taskId);
      if (!task || AUDIO_TERMINAL_STATUSES.includes(task.status)) return { kind: 'done' };
      const step = await this.step(task);
      if (step.kind === 'done') return step;
      if (step.kind === 'wait' && step.ms > 0) return step;
    }
    return { kind: 'wait', ms: 1000 };
  }

  /**
   * Claims a queued task for a caller that calls the upstream itself (streaming speech): true when
   * this caller won and must now call it; the task is then in `synthesizing`, as after a worker's claim.
   */
  claim(taskId: string): Promise<boolean> {
    const now = this.clock.now();
    return this.tasks.transition(taskId, { status: ['queued', 'processing'], phase: [null] }, { status: 'processing', phase: 'synthesizing', attempts: () => 'attempts + 1', submittedAt: now, updatedAt: now });
  }

  /** The streaming process vouches for its task until `until` (CAS on `streaming`): false once a worker took it over. */
  extendLease(taskId: string, until: Date): Promise<boolean> {
    return this.tasks.transition(taskId, { status: ['processing'], phase: ['streaming'] }, { leaseExpiresAt: until, updatedAt: this.clock.now() });
  }

  /** The stream's answer was lost (uncertain, or given up on): the worker reconciles, never streams again. */
  streamLost(taskId: string, reason: string): Promise<boolean> {
    this.logger.warn(`task ${taskId}: stream lost (${reason}); reconciling`);
    return this.tasks.transition(taskId, { status: ['processing'], phase: ['streaming'] }, { phase: 'reconciliationRequired', leaseExpiresAt: null, updatedAt: this.clock.now() });
  }

  /**
   * The stream was refused or broke: the task fails, keeping what the upstream billed (released
   * otherwise). False when the task was no longer streaming (a worker took it over meanwhile).
   */
  async failStream(taskId: string, reason: string, billableCharacters?: number): Promise<boolean> {
    const task = await this.tasks.findById(taskId);
    if (!task || task.phase !== 'streaming') return false;
    await this.fail(task, ['streaming'], reason, billableCharacters);
    return true;
  }

  /**
   * Finishes a task with its audio: store it (same key every time), record it on the row, settle the
   * hold on the billable characters, mark it succeeded. Idempotent: calling it again, or after a
   * crash at any point, ends with one file and one charge. Returns false when the task had already
   * ended otherwise (failed by a give-up meanwhile): nothing is stored or charged then.
   */
  async finishWithAudio(taskId: string, audio: Buffer, billableCharacters: number): Promise<boolean> {
    let task = await this.tasks.findById(taskId);
    if (!task || task.status === 'failed' || task.status === 'cancelled') return false;
    if (task.status === 'processing' && task.mediaKey === null && task.phase !== 'storing') {
      const format = task.request.outputFormat;
      // Realtime turns are neither replayed nor archived (spec › Events › Realtime session frames):
      // their audio went to the client as it came; the task keeps its usage, not the audio.
      const archived = task.endpoint !== 'realtime';
      let media: Pick<AudioTaskEntity, 'mediaKey' | 'contentType' | 'mediaBytes'> = { mediaKey: null, contentType: null, mediaBytes: null };
      if (archived) {
        const key = audioMediaKey(task);
        // The retention clock starts at completion, just after this; the object outlives it by a margin.
        const expiresAt = new Date(this.clock.now().getTime() + AUDIO_RETENTION_MS + AUDIO_MEDIA_EXPIRY_MARGIN_MS);
        const stored = await this.media.store({ key, body: audio, contentType: AUDIO_CONTENT_TYPES[format], workspaceId: task.workspaceId, expiresAt });
        media = { mediaKey: key, contentType: AUDIO_CONTENT_TYPES[format], mediaBytes: BigInt(stored.bytes) };
      }
      await this.tasks.transition(
        task.id,
        { status: ['processing'], phase: FINISHABLE },
        {
          phase: 'storing',
          ...media,
          outputSeconds: audioSeconds(format, audio.length),
          billableCharacters: Math.max(0, Math.floor(billableCharacters)),
          updatedAt: this.clock.now(),
        },
      );
      task = await this.tasks.findById(taskId);
      if (!task) return false;
    }
    if (task.status === 'succeeded') return true;
    if (task.phase !== 'storing') return false;
    await this.settleAndSucceed(task);
    return true;
  }

  private async step(task: AudioTaskEntity): Promise<Step> {
    // A task keeps the adapter chosen at creation: credentials or routes may have changed since.
    const provider = this.registry.get<AudioProvider>('audio', task.adapter);
    switch (task.phase) {
      case null:
        return this.synthesize(task, provider);
      case 'synthesizing':
        // Found here by a new run: whoever called the upstream died or lost the answer. Never call again.
        this.logger.warn(`task ${task.id}: found mid-synthesis; reconciling`);
        await this.tasks.transition(task.id, { status: ['processing'], phase: ['synthesizing'] }, { phase: 'reconciliationRequired', updatedAt: this.clock.now() });
        return { kind: 'wait', ms: provider.reconcileDelayMs };
      case 'streaming':
        return this.watchStream(task, provider);
      case 'reconciliationRequired':
        return this.reconcile(task, provider);
      case 'storing':
        await this.settleAndSucceed(task);
        return { kind: 'done' };
      case 'failing':
        return this.finishFailure(task);
    }
  }

  /**
   * A streaming task is never streamed nor synthesized by a worker. While its process keeps the
   * lease, come back after it; past the lease that process is gone with the stream's answer.
   */
  private async watchStream(task: AudioTaskEntity, provider: AudioProvider): Promise<Step> {
    const now = this.clock.now();
    const leftMs = (task.leaseExpiresAt?.getTime() ?? 0) - now.getTime();
    if (leftMs > 0) return { kind: 'wait', ms: leftMs + LEASE_CHECK_MARGIN_MS };
    this.logger.warn(`task ${task.id}: its streaming process stopped renewing the lease; reconciling`);
    const won = await this.tasks.transition(
      task.id,
      { status: ['processing'], phase: ['streaming'], leaseExpiredBy: now },
      { phase: 'reconciliationRequired', leaseExpiresAt: null, updatedAt: now },
    );
    return won ? { kind: 'wait', ms: provider.reconcileDelayMs } : { kind: 'continue' };
  }

  private async synthesize(task: AudioTaskEntity, provider: AudioProvider): Promise<Step> {
    if (!(await this.claim(task.id))) return { kind: 'continue' };
    const attempt = task.attempts + 1;
    const outcome = await provider.synthesize(speechSpecOf(task)).catch((error: unknown) => ({ kind: 'uncertain' as const, reason: `synthesize raised ${String(error)}` }));
    switch (outcome.kind) {
      case 'succeeded':
        await this.finishWithAudio(task.id, outcome.audio, outcome.billableCharacters);
        return { kind: 'done' };
      case 'rejected':
        if (outcome.retryable && attempt < MAX_SYNTHESIS_ATTEMPTS && !outcome.billableCharacters) {
          await this.tasks.transition(task.id, { phase: ['synthesizing'] }, { phase: null, updatedAt: this.clock.now() });
          return { kind: 'wait', ms: Math.max(outcome.retryAfterMs ?? 0, 1000 * 2 ** (attempt - 1)) };
        }
        return this.fail(task, ['synthesizing'], outcome.reason, outcome.billableCharacters);
      case 'uncertain':
        this.logger.warn(`task ${task.id}: answer lost (${outcome.reason}); reconciling`);
        await this.tasks.transition(task.id, { phase: ['synthesizing'] }, { phase: 'reconciliationRequired', updatedAt: this.clock.now() });
        return { kind: 'wait', ms: provider.reconcileDelayMs };
    }
  }

  private async reconcile(task: AudioTaskEntity, provider: AudioProvider): Promise<Step> {
    const submittedAt = task.submittedAt ?? task.createdAt;
    const outcome = await provider.recover(speechSpecOf(task), submittedAt);
    if (outcome.kind === 'found') {
      await this.finishWithAudio(task.id, outcome.audio, outcome.billableCharacters);
      return { kind: 'done' };
    }
    if (this.clock.now().getTime() - submittedAt.getTime() > provider.reconcileGiveUpMs) {
      return this.fail(task, ['reconciliationRequired'], 'the upstream never confirmed the generation; nothing was charged, create a new task');
    }
    return { kind: 'wait', ms: outcome.retryAfterMs ?? 5000 };
  }

  /** The audio is stored and on the row: charge the billable characters, then succeed (with the event). */
  private async settleAndSucceed(task: AudioTaskEntity): Promise<void> {
    const billable = task.billableCharacters ?? task.inputCharacters;
    // Priced for the task's own workspace and key (the row carries them), as its hold was.
    const resolution = await this.wallet.settle(task.holdId, this.prices.speechCost(task, task.model, billable));
    const now = this.clock.now();
    await this.terminal(task, ['storing'], {
      status: 'succeeded',
      phase: null,
      chargedMicros: resolution.capturedMicros,
      completedAt: now,
      expiresAt: new Date(now.getTime() + AUDIO_RETENTION_MS),
      updatedAt: now,
    });
  }

  /** Records the reason (and what the upstream billed) first, then resolves the hold, then ends the task. */
  private async fail(task: AudioTaskEntity, from: AudioTaskPhase[], reason: string, billableCharacters?: number): Promise<Step> {
    const won = await this.tasks.transition(
      task.id,
      { status: ['queued', 'processing'], phase: from },
      { phase: 'failing', failureReason: reason.slice(0, 1000), billableCharacters: billableCharacters ?? null, updatedAt: this.clock.now() },
    );
    if (!won) return { kind: 'continue' };
    const failing = await this.tasks.findById(task.id);
    return failing ? this.finishFailure(failing) : { kind: 'done' };
  }

  /** Keeps any usage the upstream did charge (spec: failed tasks can carry charged usage); releases the rest. */
  private async finishFailure(task: AudioTaskEntity): Promise<Step> {
    const billed = task.billableCharacters ?? 0;
    const resolution = billed > 0 ? await this.wallet.settle(task.holdId, this.prices.speechCost(task, task.model, billed)) : await this.wallet.release(task.holdId);
    const now = this.clock.now();
    await this.terminal(task, ['failing'], { status: 'failed', phase: null, chargedMicros: resolution.capturedMicros, completedAt: now, updatedAt: now });
    return { kind: 'done' };
  }

  /** The terminal transition and its event in one transaction: listeners' writes commit with it or not at all. */
  private async terminal(task: AudioTaskEntity, from: AudioTaskPhase[], changes: Partial<AudioTaskEntity> & { status: 'succeeded' | 'failed' }): Promise<void> {
    await this.tasks.transaction(async (tx) => {
      if (!(await this.tasks.transition(task.id, { status: ['processing'], phase: from }, changes, tx))) return;
      const row = (await this.tasks.findById(task.id, tx))!;
      await this.events.emitTerminal(
        {
          taskId: row.id,
          apiKeyId: row.apiKeyId,
          workspaceId: row.workspaceId,
          webhookEndpointId: row.webhookEndpointId,
          status: changes.status,
          model: row.model,
          usage: {
            inputCharacters: row.inputCharacters,
            billableCharacters: row.billableCharacters ?? 0,
            chargedUsd: row.chargedMicros === null ? 0 : microsToUsd(row.chargedMicros),
          },
        },
        tx,
      );
    });
  }
}
