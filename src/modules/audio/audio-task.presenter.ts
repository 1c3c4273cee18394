import { Injectable, Logger } from '@nestjs/common';
import { Clock, microsToUsd } from '../../../libs/common/index.js';
import { MediaNotFoundError } from '../media/index.js';
import { MediaService } from '../media/media.service.js';
import { AUDIO_LINK_TTL_SECONDS } from './audio.constants.js';
import type { AudioTaskEntity } from './audio-task.entity.js';
import type { AudioOutputDto, AudioTaskResponseDto } from './audio-task.resource.js';

/** The spec's audio task shape; links are minted on every read and never stored. */
@Injectable()
export class AudioTaskPresenter {
  private readonly logger = new Logger(AudioTaskPresenter.name);

  constructor(
    private readonly media: MediaService,
    private readonly clock: Clock,
  ) {}

  async toResource(task: AudioTaskEntity): Promise<AudioTaskResponseDto> {
    const resource: AudioTaskResponseDto = {
      id: task.id,
      model: task.model,
      status: task.status,
      outputs: { audios: await this.audios(task) },
      usage: {
        inputCharacters: task.inputCharacters,
        billableCharacters: task.billableCharacters ?? 0,
        chargedUsd: task.chargedMicros === null ? 0 : microsToUsd(task.chargedMicros),
      },
      createdAt: task.createdAt.toISOString(),
      updatedAt: task.updatedAt.toISOString(),
    };
    if (task.phase === 'reconciliationRequired' && (task.status === 'queued' || task.status === 'processing')) resource.phase = 'reconciliationRequired';
    if (task.status === 'failed' && task.failureReason) resource.failureReason = task.failureReason;
    return resource;
  }

  private async audios(task: AudioTaskEntity): Promise<AudioOutputDto[]> {
    if (task.status !== 'succeeded' || !task.expiresAt || task.mediaKey === null || task.mediaDeletedAt !== null) return [];
    const left = task.expiresAt.getTime() - this.clock.now().getTime();
    if (left <= 0) return [];
    // A link never outlives the retention: near its end the link is shorter than an hour.
    const ttl = Math.max(1, Math.min(AUDIO_LINK_TTL_SECONDS, Math.floor(left / 1000)));
    // The object can be gone at the very edge of retention (the sweeper's clock): the task still
    // answers, with no link, rather than a 404 for a task that exists.
    const link = await this.media.signedLink(task.mediaKey, ttl).catch((error: unknown) => {
      if (!(error instanceof MediaNotFoundError)) throw error;
      this.logger.warn(`task ${task.id}: media ${task.mediaKey} is missing before its expiry`);
      return null;
    });
    if (!link) return [];
    return [{ url: link.url, contentType: task.contentType ?? 'application/octet-stream', bytes: Number(task.mediaBytes ?? 0n), expiresAt: link.expiresAt.toISOString() }];
  }
}
