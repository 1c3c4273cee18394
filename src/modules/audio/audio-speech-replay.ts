import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Clock, DomainError } from '../../../libs/common/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { MediaNotFoundError } from '../media/index.js';
import { MediaService } from '../media/media.service.js';
import { AudioErrorCode } from './audio-errors.js';
import { AudioTaskRepository } from './audio-task.repository.js';

/**
 * The answer to a repeated streaming-speech request (same key, same request) for a client that
 * lost the first answer: still running → 409 `audio.request_in_progress`; succeeded → the stored
 * audio with the first answer's headers and `Idempotency-Replay: true`; failed → 409
 * `audio.generation_failed` (this key will never give audio; the task says why).
 */
@Injectable()
export class AudioSpeechReplay {
  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly media: MediaService,
    private readonly clock: Clock,
  ) {}

  async answer(key: AuthenticatedKey, taskId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const task = await this.tasks.findOwned(key.id, taskId);
    if (!task) throw new Error(`idempotency record of ${taskId} without its task`);
    const headers = { 'x-svc-task-id': task.id, 'idempotency-replay': 'true' };
    if (task.status === 'queued' || task.status === 'processing') {
      throw new DomainError(409, AudioErrorCode.RequestInProgress, `the request with this Idempotency-Key is still running as task ${task.id}; poll it, or repeat this request shortly`, {
        ...headers,
        'retry-after': '1',
      });
    }
    if (task.status !== 'succeeded') {
      const why = task.failureReason ? `: ${task.failureReason}` : '';
      throw new DomainError(409, AudioErrorCode.GenerationFailed, `the request with this Idempotency-Key ended ${task.status} (task ${task.id})${why}; send a new request with a new key`, headers);
    }
    const expired = new DomainError(409, AudioErrorCode.ReplayExpired, `the audio of task ${task.id} is no longer stored; send a new request with a new key`, headers);
    if (task.mediaKey === null || task.mediaDeletedAt !== null || (task.expiresAt && task.expiresAt <= this.clock.now())) throw expired;
    try {
      await this.media.withLocalFile(task.mediaKey, async (path) => {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': task.contentType ?? 'application/octet-stream', 'cache-control': 'no-store', 'x-request-id': String(request.id), ...headers });
        // No content-length: chunked, as the first answer was. A client leaving ends the copy.
        await pipeline(createReadStream(path), reply.raw).catch(() => reply.raw.destroy());
      });
    } catch (error) {
      if (error instanceof MediaNotFoundError) throw expired;
      throw error;
    }
  }
}
