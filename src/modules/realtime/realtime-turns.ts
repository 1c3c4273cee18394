import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Clock, DomainError, microsToUsd } from '../../../libs/common/index.js';
import { AudioSpeechService, AudioTaskService } from '../audio/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { RealtimeFrameErrorCode } from './realtime-errors.js';
import type { ServerFrame } from './realtime-frames.js';
import { RealtimeMetrics } from './realtime-metrics.js';
import type { RealtimeSessionEntity } from './realtime-session.entity.js';
import { RealtimeTurnEntity } from './realtime-session.entity.js';
import { AllocationRefused, isUniqueViolation, RealtimeSessionRepository } from './realtime-session.repository.js';

/** Where a turn's frames go; `open` is false once the connection is gone (the turn goes on). */
export interface TurnOutput {
  readonly open: boolean;
  send(frame: ServerFrame): void;
}

export interface TurnContext {
  session: RealtimeSessionEntity;
  key: AuthenticatedKey;
}

/** A repeated turn waits this long for its task to end before answering `turn.status` with where it stands. */
const REPLAY_WAIT_MS = 30_000;
const REPLAY_POLL_MS = 200;

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * One turn of a session (docs/realtime.md › Turns): a known turn id replays its task (same text)
 * or is refused (other text); a new one is an audio task created through the audio service with
 * its budget allocation and turn row in the same transaction, then streamed in this process. The
 * client's connection only receives frames: closing it never stops a turn nor its charge.
 */
@Injectable()
export class RealtimeTurns {
  private readonly logger = new Logger(RealtimeTurns.name);

  constructor(
    private readonly speech: AudioSpeechService,
    private readonly tasks: AudioTaskService,
    private readonly sessions: RealtimeSessionRepository,
    private readonly metrics: RealtimeMetrics,
    private readonly clock: Clock,
  ) {}

  /** Resolves once the turn's last frame was handed to the connection (or it ended unseen). */
  async run(context: TurnContext, turnId: string, text: string, out: TurnOutput, committedAt: number): Promise<void> {
    const textHash = sha256(text);
    let known = await this.sessions.findTurn(context.session.id, turnId);
    if (!known) {
      const going = await this.turnInFlight(context);
      if (going !== null) {
        this.metrics.turns.inc({ outcome: 'refused' });
        out.send({
          type: 'error',
          code: RealtimeFrameErrorCode.TurnInFlight,
          message: `turn ${going} of this session is still in flight; repeat it (same turnId and text) to follow it, or commit the next turn once it has ended`,
          turnId,
        });
        return;
      }
      try {
        await this.create(context, turnId, text, textHash, out, committedAt);
        return;
      } catch (error) {
        // The same turn id recorded meanwhile (a retry racing the first commit): it is a repeat.
        if (!isUniqueViolation(error)) return this.refuse(out, turnId, error);
        known = await this.sessions.findTurn(context.session.id, turnId);
        if (!known) return this.refuse(out, turnId, error);
      }
    }
    if (!known.textHash.equals(textHash)) {
      this.metrics.turns.inc({ outcome: 'refused' });
      out.send({ type: 'error', code: RealtimeFrameErrorCode.TurnConflict, message: `turn ${turnId} was committed with another text; use a new turnId for a new text`, turnId });
      return;
    }
    await this.replay(context, known, out);
  }

  private async create(context: TurnContext, turnId: string, text: string, textHash: Buffer, out: TurnOutput, committedAt: number): Promise<void> {
    const { session, key } = context;
    let estimatedMicros = 0n;
    const task = await this.speech.createTurnTask(
      key,
      { model: session.model, mode: 'text_to_speech', prompt: text, controls: { voiceId: session.voiceId, outputFormat: session.outputFormat } },
      async (tx, created) => {
        const turn = Object.assign(new RealtimeTurnEntity(), {
          sessionId: session.id,
          turnId,
          textHash,
          taskId: created.id,
          estimatedMicros: created.amountMicros,
          createdAt: this.clock.now(),
        } satisfies RealtimeTurnEntity);
        await this.sessions.allocateTurn(tx, turn, this.clock.now());
        estimatedMicros = created.amountMicros;
      },
    );
    const taskId = task.id;
    out.send({ type: 'turn.accepted', turnId, taskId, estimatedUsd: microsToUsd(estimatedMicros) });
    let first = true;
    const end = await this.speech.runStream(taskId, {
      start: () => undefined,
      push: (chunk) => {
        if (first) {
          first = false;
          this.metrics.firstAudioSeconds.observe((performance.now() - committedAt) / 1000);
        }
        out.send({ type: 'audio.delta', turnId, taskId, audio: chunk.toString('base64') });
      },
    });
    if (end.kind !== 'finished') this.logger.warn(`turn ${turnId} of ${session.id} (task ${taskId}): the stream ended ${end.kind}`);
    await this.answerTerminal(key, turnId, taskId, out, false);
  }

  /**
   * One turn in flight per session (spec › Limits), also across connections: a turn committed
   * on a connection that is gone goes on, and a new connection may not start another beside it.
   * A turn is in flight while its task is being generated (queued or processing); one whose
   * result is being reconciled is not (`turn.status` already told the client where it stands).
   * Returns the in-flight turn's id, or null.
   */
  private async turnInFlight(context: TurnContext): Promise<string | null> {
    const last = await this.sessions.lastTurn(context.session.id);
    if (!last) return null;
    const task = await this.tasks.get(context.key, last.taskId);
    const generating = (task.status === 'queued' || task.status === 'processing') && task.phase !== 'reconciliationRequired';
    return generating ? last.turnId : null;
  }

  /** A repeated turn: its task again, never new audio nor a second charge; its end once the task has one. */
  private async replay(context: TurnContext, turn: RealtimeTurnEntity, out: TurnOutput): Promise<void> {
    out.send({ type: 'turn.accepted', turnId: turn.turnId, taskId: turn.taskId, estimatedUsd: microsToUsd(turn.estimatedMicros) });
    const deadline = Date.now() + REPLAY_WAIT_MS;
    while (out.open && Date.now() < deadline) {
      const task = await this.tasks.get(context.key, turn.taskId);
      if (TERMINAL.has(task.status)) break;
      await sleep(REPLAY_POLL_MS);
    }
    await this.answerTerminal(context.key, turn.turnId, turn.taskId, out, true);
  }

  /** `turn.completed` with the task's usage once it succeeded (settled); `turn.status` otherwise. */
  private async answerTerminal(key: AuthenticatedKey, turnId: string, taskId: string, out: TurnOutput, replayed: boolean): Promise<void> {
    const task = await this.tasks.get(key, taskId);
    if (task.status === 'succeeded') {
      out.send({ type: 'turn.completed', turnId, taskId, status: task.status, usage: task.usage });
    } else {
      out.send({ type: 'turn.status', turnId, taskId, status: task.status, phase: task.phase ?? null });
    }
    this.metrics.turns.inc({ outcome: replayed ? 'replayed' : task.status === 'succeeded' ? 'completed' : task.status === 'failed' ? 'failed' : 'unresolved' });
  }

  /** A refusal before anything was created: an `error` frame (audio's own codes keep their `audio.` prefix). */
  private refuse(out: TurnOutput, turnId: string, error: unknown): void {
    this.metrics.turns.inc({ outcome: 'refused' });
    if (error instanceof AllocationRefused) {
      if (error.reason === 'session_closed') {
        out.send({ type: 'error', code: RealtimeFrameErrorCode.SessionClosed, message: 'the session was closed or has expired', turnId });
      } else {
        out.send({
          type: 'error',
          code: RealtimeFrameErrorCode.BudgetExhausted,
          message: `this turn's estimate does not fit the session budget (${microsToUsd(error.remainingMicros)} USD left of maxCostUsd); nothing was charged`,
          turnId,
        });
      }
      return;
    }
    if (error instanceof DomainError) {
      const code = error.code.includes('.') ? error.code : `audio.${error.code}`;
      // The turn's text is the speech request's prompt: the message names the frame's field.
      const message = error.message.startsWith('prompt') ? `text${error.message.slice('prompt'.length)}` : error.message;
      out.send({ type: 'error', code, message, turnId });
      return;
    }
    this.logger.error(`turn ${turnId}: ${String(error)}`);
    out.send({ type: 'error', code: RealtimeFrameErrorCode.Internal, message: 'the turn could not be started; nothing was charged, commit it again', turnId });
  }
}
