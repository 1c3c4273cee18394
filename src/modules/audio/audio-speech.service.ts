import { Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Clock, DomainError } from '../../../libs/common/index.js';
import { AUDIO_CONTENT_TYPES, type AudioProvider, ProviderRegistry, type SpeechStream, SpeechStreamError, type StreamOutcome } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { AUDIO_QUEUE } from './audio-jobs.js';
import { Queues } from '../../queue/queues.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { AUDIO_STREAM_MAX_MS, AUDIO_STREAM_MAX_SECONDS, audioJobId } from './audio.constants.js';
import { audioBytesFor } from './audio-duration.js';
import { AudioErrorCode } from './audio-errors.js';
import { AudioGenerationService, type CreateAudioOptions } from './audio-generation.service.js';
import { parseIdempotencyKey } from './audio-idempotency.js';
import { AudioIdempotencyRepository } from './audio-idempotency.repository.js';
import { AudioSpeechReplay } from './audio-speech-replay.js';
import { SpeechResponseWriter } from './audio-speech-writer.js';
import { keepStreamLease } from './audio-stream-lease.js';
import type { AudioTaskEntity } from './audio-task.entity.js';
import { AudioTaskRepository } from './audio-task.repository.js';
import { AudioTaskRunner, speechSpecOf } from './audio-task.runner.js';
import type { AudioTaskResponseDto } from './audio-task.resource.js';
import type { CreateSpeechDto } from './dto/create-audio-generation.dto.js';

/** Why a stream was given up: the upstream sent more, or for longer, than a 2,000-character text can make. */
class StreamOverrun extends Error {}

/** Where the chunks of a running stream go (the HTTP body, a realtime connection). Neither method may block. */
export interface SpeechSink {
  /** The upstream accepted the request: chunks follow. */
  start(task: AudioTaskEntity): void;
  push(chunk: Buffer): void;
}

/**
 * How a stream ended for its task. `finished`: stored, settled, succeeded. `broken`: the stream
 * broke after it started (failed, or reconciling when the cause is unknown). `rejected`: refused
 * before any audio (failed, nothing charged). `uncertain`: the answer was lost (reconciling).
 */
export type StreamEnd =
  | { kind: 'finished' }
  | { kind: 'broken' }
  | { kind: 'rejected'; reason: string; retryable: boolean; retryAfterMs?: number; unhealthy?: boolean }
  | { kind: 'uncertain'; reconcileDelayMs: number };

/**
 * Streaming speech, POST /v1/audio/speech (DESIGN §4, docs/audio.md › Streaming speech): the
 * creation use case (validation, idempotency, hold, task row straight in `streaming` with a lease
 * and a delayed watchdog job), then the upstream stream in this process, relayed to the client as
 * it comes and finished by the runner (store, settle, succeeded). The client leaving does not
 * cancel the generation nor its charge; a stream that breaks fails the task and cuts the body.
 */
@Injectable()
export class AudioSpeechService {
  private readonly logger = new Logger(AudioSpeechService.name);

  constructor(
    private readonly generations: AudioGenerationService,
    private readonly tasks: AudioTaskRepository,
    private readonly runner: AudioTaskRunner,
    private readonly replays: AudioSpeechReplay,
    private readonly idempotency: AudioIdempotencyRepository,
    private readonly registry: ProviderRegistry,
    private readonly queues: Queues,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async speak(key: AuthenticatedKey, dto: CreateSpeechDto, idempotencyHeader: string | string[] | undefined, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const leaseMs = this.config.env.AUDIO_STREAM_LEASE_MS;
    const idempotencyKey = parseIdempotencyKey(idempotencyHeader);
    const created = await this.generations.create(key, dto, { endpoint: 'speech', idempotencyKey, streamLeaseMs: leaseMs });
    if (created.replayed) return this.replays.answer(key, created.task.id, request, reply);

    let writer: SpeechResponseWriter | undefined;
    const end = await this.runStream(created.task.id, {
      start: (task) => {
        reply.hijack();
        writer = new SpeechResponseWriter(reply.raw);
        writer.start({ 'content-type': AUDIO_CONTENT_TYPES[task.request.outputFormat], ...taskHeader(task), 'x-request-id': String(request.id) });
      },
      push: (chunk) => writer!.push(chunk),
    });
    const id = created.task.id;
    switch (end.kind) {
      case 'rejected':
        if (!end.retryable && !end.unhealthy) {
          throw new DomainError(400, AudioErrorCode.GenerationRejected, `the upstream refused this request: ${end.reason}; nothing was charged`, { 'x-svc-task-id': id });
        }
        // Not the request's fault (the upstream busy, or refusing the gateway's own account): a
        // 503, which the spec has the client repeat with the same key, so the key is freed.
        if (idempotencyKey !== undefined) {
          // Should this fail (database away), the answer stays the 503; the key then stays spent (409 on a repeat).
          await this.idempotency
            .forget({ apiKeyId: key.id, endpoint: 'speech', key: idempotencyKey }, id)
            .catch((error: unknown) => this.logger.warn(`task ${id}: its Idempotency-Key could not be freed: ${String(error)}`));
        }
        throw new DomainError(503, AudioErrorCode.Unavailable, `audio generation is temporarily unavailable (${end.reason}); nothing was charged, try again later`, {
          'x-svc-task-id': id,
          'retry-after': String(Math.max(1, Math.ceil((end.retryAfterMs ?? (end.unhealthy ? 30_000 : 5000)) / 1000))),
        });
      case 'uncertain':
        throw new DomainError(
          503,
          AudioErrorCode.ReconciliationRequired,
          `the upstream's answer was lost; task ${id} is being reconciled: poll it, or repeat this request with the same Idempotency-Key`,
          { 'x-svc-task-id': id, 'retry-after': String(Math.max(1, Math.ceil(end.reconcileDelayMs / 1000))) },
        );
      case 'broken':
        return writer!.abort();
      case 'finished':
        return writer!.end();
    }
  }

  /**
   * A realtime turn (docs/realtime.md › Turns): a `text_to_speech` task created straight into
   * streaming, like the speech stream, with the caller's writes (budget, turn row) in its creation
   * transaction. The caller then runs it with `runStream`; nothing here depends on the client.
   */
  async createTurnTask(key: AuthenticatedKey, dto: CreateSpeechDto, beforeHold: NonNullable<CreateAudioOptions['beforeHold']>): Promise<AudioTaskResponseDto> {
    const created = await this.generations.create(key, dto, { endpoint: 'realtime', streamLeaseMs: this.config.env.AUDIO_STREAM_LEASE_MS, beforeHold });
    return created.task;
  }

  /**
   * Runs the upstream stream of a task created `streaming` (by `speak` or `createTurnTask`) in this
   * process under its lease: `sink.start` once the upstream accepted it, `sink.push` for each chunk
   * as it comes; then the runner finishes the task (store, settle, succeeded) before this resolves.
   * The sink never slows the upstream; what the client does changes nothing here. A refusal fails
   * the task (nothing charged); a lost answer hands it to reconciliation; a break fails it keeping
   * what the upstream billed.
   */
  async runStream(taskId: string, sink: SpeechSink): Promise<StreamEnd> {
    const task = await this.tasks.findById(taskId);
    if (!task) throw new Error(`task ${taskId} vanished after its creation`);
    const lease = keepStreamLease({ runner: this.runner, taskId: task.id, leaseMs: this.config.env.AUDIO_STREAM_LEASE_MS, clock: this.clock, logger: this.logger });
    try {
      const provider = this.registry.get<AudioProvider>('audio', task.adapter);
      const outcome: StreamOutcome = await provider
        .stream(speechSpecOf(task))
        .catch((error: unknown) => ({ kind: 'uncertain' as const, reason: `stream raised ${String(error)}` }));
      switch (outcome.kind) {
        case 'rejected':
          await this.runner.failStream(task.id, outcome.reason);
          return {
            kind: 'rejected',
            reason: outcome.reason,
            retryable: outcome.retryable,
            ...(outcome.retryAfterMs !== undefined && { retryAfterMs: outcome.retryAfterMs }),
            ...(outcome.unhealthy && { unhealthy: true }),
          };
        case 'uncertain':
          await this.lost(task, outcome.reason);
          return { kind: 'uncertain', reconcileDelayMs: provider.reconcileDelayMs };
        case 'streaming':
          sink.start(task);
          return await this.relay(task, outcome.stream, sink);
      }
    } finally {
      lease.stop();
    }
  }

  /**
   * Reads the upstream to its end whatever the client does, handing each chunk to the sink as it
   * comes and keeping it for storage; then the runner finishes the task. A break fails the task
   * (keeping what the upstream billed).
   */
  private async relay(task: AudioTaskEntity, stream: SpeechStream, sink: SpeechSink): Promise<StreamEnd> {
    const format = task.request.outputFormat;
    const maxBytes = audioBytesFor(format, AUDIO_STREAM_MAX_SECONDS);
    const deadline = this.clock.now().getTime() + AUDIO_STREAM_MAX_MS;
    const chunks: Buffer[] = [];
    let bytes = 0;
    try {
      for await (const chunk of stream.chunks) {
        bytes += chunk.length;
        // Leaving the loop returns the upstream iterator, which closes the upstream response.
        if (bytes > maxBytes) throw new StreamOverrun(`the upstream sent more than ${maxBytes} bytes, longer than any 2,000-character text`);
        if (this.clock.now().getTime() > deadline) throw new StreamOverrun(`the stream ran longer than ${AUDIO_STREAM_MAX_MS} ms`);
        chunks.push(chunk);
        sink.push(chunk);
      }
    } catch (error) {
      if (error instanceof SpeechStreamError || error instanceof StreamOverrun) {
        const billed = error instanceof SpeechStreamError ? error.billableCharacters : undefined;
        await this.runner.failStream(task.id, `the audio stream broke: ${error.message}`, billed).catch((failure: unknown) => this.logger.error(`task ${task.id}: ${String(failure)}`));
      } else {
        // Not the upstream's word: what it generated is unknown, so the worker reconciles.
        await this.lost(task, `reading the stream raised ${String(error)}`).catch((failure: unknown) => this.logger.error(`task ${task.id}: ${String(failure)}`));
      }
      return { kind: 'broken' };
    }
    try {
      await this.runner.finishWithAudio(task.id, Buffer.concat(chunks, bytes), stream.billableCharacters() ?? task.inputCharacters);
    } catch (error) {
      // The lease lapses and the watchdog job reconciles it; the client must not take this for a success.
      this.logger.error(`task ${task.id}: finishing the streamed audio failed; the worker takes it over: ${String(error)}`);
      return { kind: 'broken' };
    }
    return { kind: 'finished' };
  }

  /** The answer was lost: reconciliation now, by the watchdog job brought forward. */
  private async lost(task: AudioTaskEntity, reason: string): Promise<void> {
    await this.runner.streamLost(task.id, reason);
    try {
      await (await this.queues.getJob(AUDIO_QUEUE, audioJobId(task.id)))?.promote();
    } catch (error) {
      // Not delayed any more (already running), or Redis is away: the job or the reconciler comes anyway.
      this.logger.warn(`task ${task.id}: could not bring its job forward: ${String(error)}`);
    }
  }
}

const taskHeader = (task: Pick<AudioTaskEntity, 'id'>): Record<string, string> => ({ 'x-svc-task-id': task.id });
