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
import { AudioGenerationService } from './audio-generation.service.js';
import { parseIdempotencyKey } from './audio-idempotency.js';
import { AudioSpeechReplay } from './audio-speech-replay.js';
import { SpeechResponseWriter } from './audio-speech-writer.js';
import { keepStreamLease } from './audio-stream-lease.js';
import type { AudioTaskEntity } from './audio-task.entity.js';
import { AudioTaskRepository } from './audio-task.repository.js';
import { AudioTaskRunner, speechSpecOf } from './audio-task.runner.js';
import type { CreateSpeechDto } from './dto/create-audio-generation.dto.js';

/** Why a stream was given up: the upstream sent more, or for longer, than a 2,000-character text can make. */
class StreamOverrun extends Error {}

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
    private readonly registry: ProviderRegistry,
    private readonly queues: Queues,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async speak(key: AuthenticatedKey, dto: CreateSpeechDto, idempotencyHeader: string | string[] | undefined, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const leaseMs = this.config.env.AUDIO_STREAM_LEASE_MS;
    const created = await this.generations.create(key, dto, { endpoint: 'speech', idempotencyKey: parseIdempotencyKey(idempotencyHeader), streamLeaseMs: leaseMs });
    if (created.replayed) return this.replays.answer(key, created.task.id, request, reply);
    const task = await this.tasks.findById(created.task.id);
    if (!task) throw new Error(`task ${created.task.id} vanished after its creation`);

    const lease = keepStreamLease({ runner: this.runner, taskId: task.id, leaseMs, clock: this.clock, logger: this.logger });
    try {
      const provider = this.registry.get<AudioProvider>('audio', task.adapter);
      const outcome: StreamOutcome = await provider
        .stream(speechSpecOf(task))
        .catch((error: unknown) => ({ kind: 'uncertain' as const, reason: `stream raised ${String(error)}` }));
      switch (outcome.kind) {
        case 'rejected':
          await this.runner.failStream(task.id, outcome.reason);
          throw outcome.retryable
            ? new DomainError(503, AudioErrorCode.Unavailable, `audio generation is temporarily unavailable (${outcome.reason}); nothing was charged, try again later`, {
                ...taskHeader(task),
                'retry-after': String(Math.max(1, Math.ceil((outcome.retryAfterMs ?? 5000) / 1000))),
              })
            : new DomainError(400, AudioErrorCode.GenerationRejected, `the upstream refused this request: ${outcome.reason}; nothing was charged`, taskHeader(task));
        case 'uncertain':
          await this.lost(task, outcome.reason);
          throw new DomainError(
            503,
            AudioErrorCode.ReconciliationRequired,
            `the upstream's answer was lost; task ${task.id} is being reconciled: poll it, or repeat this request with the same Idempotency-Key`,
            { ...taskHeader(task), 'retry-after': String(Math.max(1, Math.ceil(provider.reconcileDelayMs / 1000))) },
          );
        case 'streaming':
          return await this.relay(task, outcome.stream, request, reply);
      }
    } finally {
      lease.stop();
    }
  }

  /**
   * Reads the upstream to its end whatever the client does, relaying each chunk as it comes and
   * keeping it for storage; then the runner finishes the task and the body ends cleanly. A break
   * fails the task (keeping what the upstream billed) and cuts the body short.
   */
  private async relay(task: AudioTaskEntity, stream: SpeechStream, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const format = task.request.outputFormat;
    reply.hijack();
    const writer = new SpeechResponseWriter(reply.raw);
    writer.start({ 'content-type': AUDIO_CONTENT_TYPES[format], ...taskHeader(task), 'x-request-id': String(request.id) });

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
        writer.push(chunk);
      }
    } catch (error) {
      if (error instanceof SpeechStreamError || error instanceof StreamOverrun) {
        const billed = error instanceof SpeechStreamError ? error.billableCharacters : undefined;
        await this.runner.failStream(task.id, `the audio stream broke: ${error.message}`, billed).catch((failure: unknown) => this.logger.error(`task ${task.id}: ${String(failure)}`));
      } else {
        // Not the upstream's word: what it generated is unknown, so the worker reconciles.
        await this.lost(task, `reading the stream raised ${String(error)}`).catch((failure: unknown) => this.logger.error(`task ${task.id}: ${String(failure)}`));
      }
      await writer.abort();
      return;
    }
    try {
      await this.runner.finishWithAudio(task.id, Buffer.concat(chunks, bytes), stream.billableCharacters() ?? task.inputCharacters);
    } catch (error) {
      // The lease lapses and the watchdog job reconciles it; the client must not take this for a success.
      this.logger.error(`task ${task.id}: finishing the streamed audio failed; the worker takes it over: ${String(error)}`);
      await writer.abort();
      return;
    }
    await writer.end();
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
