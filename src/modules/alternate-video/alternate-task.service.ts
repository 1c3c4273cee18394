import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock, isIdOf, microsToUsd, newId } from '../../../libs/common/index.js';
import {
  ALTERNATE_VIDEO_CAPABILITY,
  type AlternateCreateOutcome,
  type AlternateVideoProvider,
  NoLiveAdapterError,
  ProviderRegistry,
  SandboxAlternateVideoProvider,
} from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { type HoldInput, PriceCatalogue } from '../billing/index.js';
import { type CreationKind, holdThenRow, TaskCreations } from '../../queue/task-creations.js';
import { WalletService } from '../billing/wallet.service.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { MediaNotFoundError } from '../media/index.js';
import { MediaService } from '../media/media.service.js';
import { GenerationTaskReaders, type SharedTaskListEntry, type SharedTaskListFilter } from '../video/generation-task-readers.service.js';
import { ALTERNATE_CALLBACK_PATH, ALTERNATE_HOLD_SUBJECT, ALTERNATE_LINK_TTL_SECONDS } from './alternate.constants.js';
import { AlternateError, AlternateErrorCode, alternateInvalid, upstreamRefusal } from './alternate-errors.js';
import { AlternateImageLoader, type LoadedImage } from './alternate-image.loader.js';
import { AlternateMetrics } from './alternate-metrics.js';
import { AlternateTaskEntity, type AlternateRequestSnapshot } from './alternate-task.entity.js';
import { AlternateTaskProgress } from './alternate-task.progress.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';
import type { AlternateTaskResponseDto } from './alternate-task.resource.js';
import { alternateSpec } from './alternate-task.runner.js';
import { ALTERNATE_DEFAULT_MODEL, type CreateAlternateTaskDto } from './dto/create-alternate-task.dto.js';
import { newPaidTaskRow } from '../../database/paid-task-columns.js';

/**
 * The alternate provider's use cases: create (validate → route → images → hold + row →
 * synchronous upstream create → answer), and the shared task endpoint's reader for `alt:` ids
 * (read with fresh links, list, the refused delete).
 */
@Injectable()
export class AlternateTaskService implements OnModuleInit {
  private readonly logger = new Logger(AlternateTaskService.name);

  constructor(
    private readonly tasks: AlternateTaskRepository,
    private readonly progress: AlternateTaskProgress,
    private readonly images: AlternateImageLoader,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly registry: ProviderRegistry,
    private readonly media: MediaService,
    private readonly metrics: AlternateMetrics,
    private readonly readers: GenerationTaskReaders,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly creations: TaskCreations,
  ) {}

  /** The hold, then the row with it (no job: the request itself makes the upstream create). */
  private readonly creation: CreationKind<{ hold: HoldInput; row: AlternateTaskEntity }, AlternateTaskEntity> = holdThenRow('alternate', {
    hold: (hold, tx) => this.wallet.hold(hold, tx),
    withHold: (row, holdId) => Object.assign(new AlternateTaskEntity(), row, { holdId }),
    insert: (tx, task) => this.tasks.insert(tx, task),
  });

  onModuleInit(): void {
    this.readers.register({
      idPrefix: 'alt',
      get: async (key, id) => {
        const task = await this.owned(key, id);
        return task ? this.toResource(task) : null;
      },
      delete: (key, id) => this.delete(key, id),
      list: (key, filter) => this.listEntries(key, filter),
    });
  }

  async create(key: AuthenticatedKey, dto: CreateAlternateTaskDto): Promise<AlternateTaskResponseDto> {
    const model = dto.model ?? ALTERNATE_DEFAULT_MODEL;
    const duration = dto.duration ?? 5;
    const mode = dto.mode ?? 'std';
    const imageToVideo = dto.image !== undefined || dto.imageTail !== undefined;
    if (imageToVideo && dto.aspectRatio !== undefined) {
      throw alternateInvalid('aspectRatio', 'is not accepted with image or imageTail: an image-to-video task takes the ratio of its image');
    }
    const { adapter, provider } = this.provider(model, key.environment);
    const [image, imageTail] = await Promise.all([
      dto.image === undefined ? undefined : this.images.load('image', dto.image),
      dto.imageTail === undefined ? undefined : this.images.load('imageTail', dto.imageTail),
    ]);
    const request: AlternateRequestSnapshot = {
      kind: imageToVideo ? 'image2video' : 'text2video',
      prompt: dto.prompt,
      aspectRatio: dto.aspectRatio ?? '16:9',
      ...(dto.negativePrompt !== undefined ? { negativePrompt: dto.negativePrompt } : {}),
      ...(image ? { image: image.summary } : {}),
      ...(imageTail ? { imageTail: imageTail.summary } : {}),
    };
    const id = newId('alt');
    const now = this.clock.now();
    const amountMicros = this.prices.alternateVideoCost({ workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment }, model, mode, duration);
    const row = newPaidTaskRow(AlternateTaskEntity, id, key, now, {
      model,
      mode,
      durationSeconds: duration,
      request,
      adapter,
      status: 'queued',
      phase: 'creating',
      upstreamTaskId: null,
      upstreamStatus: null,
      resultUrl: null,
      pollAttempts: 0,
      pollErrors: 0,
      submittedAt: now,
      reconciledAt: null,
      mediaBytes: null,
      outputSeconds: null,
    });
    const hold = { workspaceId: key.workspaceId, environment: key.environment, apiKeyId: key.id, amountMicros, subjectType: ALTERNATE_HOLD_SUBJECT, subjectId: id };
    // Hold + row in one transaction, shared with the creations arriving meanwhile (TaskCreations).
    const task = await this.creations.create(this.creation, { hold, row });
    const outcome = await this.send(task, provider, image, imageTail);
    return this.afterCreate(task, provider, outcome);
  }

  /** The synchronous upstream create: our id as `external_task_id`, our callback route as `callback_url`. */
  private send(task: AlternateTaskEntity, provider: AlternateVideoProvider, image?: LoadedImage, imageTail?: LoadedImage): Promise<AlternateCreateOutcome> {
    return provider
      .create({
        ...alternateSpec(task),
        ...(task.request.negativePrompt !== undefined ? { negativePrompt: task.request.negativePrompt } : {}),
        ...(image ? { imageBase64: image.base64 } : {}),
        ...(imageTail ? { imageTailBase64: imageTail.base64 } : {}),
        callbackUrl: `${this.config.publicBaseUrl}${ALTERNATE_CALLBACK_PATH}`,
      })
      .catch((error: unknown) => ({ kind: 'uncertain' as const, reason: `create raised ${String(error)}` }));
  }

  private async afterCreate(task: AlternateTaskEntity, provider: AlternateVideoProvider, outcome: AlternateCreateOutcome): Promise<AlternateTaskResponseDto> {
    const spec = alternateSpec(task);
    switch (outcome.kind) {
      case 'accepted': {
        this.metrics.create(task.model, 'accepted');
        // A callback may have been faster than this answer: then it already moved the task.
        await this.tasks.transition(task.id, { phase: ['creating'], upstreamIsNull: true }, { phase: 'generating', upstreamTaskId: outcome.upstreamTaskId, upstreamStatus: 'submitted', updatedAt: this.clock.now() });
        await this.progress.wake(task.id, provider.pollDelayMs(spec, 0, task.submittedAt!));
        break;
      }
      case 'uncertain': {
        this.metrics.create(task.model, 'uncertain');
        this.logger.warn(`task ${task.id}: create answer lost (${outcome.reason}); reconciling by external_task_id`);
        await this.tasks.transition(task.id, { phase: ['creating'] }, { phase: 'reconciliationRequired', updatedAt: this.clock.now() });
        await this.progress.wake(task.id, provider.reconcileDelayMs);
        break;
      }
      case 'refused': {
        this.metrics.create(task.model, 'refused', outcome.upstreamCode);
        const refusal = upstreamRefusal(outcome.upstreamCode, outcome.httpStatus);
        const code = outcome.upstreamCode === null ? `HTTP ${outcome.httpStatus}` : `code ${outcome.upstreamCode}`;
        await this.progress.fail(task, `the video provider refused the create (${code})`, 'create');
        throw refusal;
      }
    }
    return this.toResource((await this.tasks.findById(task.id))!);
  }

  /** Alternate tasks cannot be cancelled or deleted (spec, Endpoints › Video 5): nothing is released or cancelled. */
  async delete(key: AuthenticatedKey, id: string): Promise<false> {
    if (!(await this.owned(key, id))) return false;
    throw new AlternateError(
      405,
      AlternateErrorCode.OperationNotSupported,
      'alternate-provider tasks cannot be cancelled or deleted; the hold and the remote task are untouched',
      undefined,
      { allow: 'GET' },
    );
  }

  private async listEntries(key: AuthenticatedKey, filter: SharedTaskListFilter): Promise<SharedTaskListEntry[]> {
    const rows = await this.tasks.listOwned(key.id, filter);
    return rows.map((row) => ({ id: row.id, createdAt: row.createdAt, render: () => this.toResource(row) }));
  }

  private async owned(key: AuthenticatedKey, id: string): Promise<AlternateTaskEntity | null> {
    if (!isIdOf('alt', id)) return null;
    return this.tasks.findOwned(key.id, id);
  }

  private provider(model: string, environment: AuthenticatedKey['environment']): { adapter: string; provider: AlternateVideoProvider } {
    let resolved: { adapter: string; provider: AlternateVideoProvider };
    try {
      resolved = this.registry.resolve<AlternateVideoProvider>({ capability: ALTERNATE_VIDEO_CAPABILITY, model, environment });
    } catch (error) {
      if (error instanceof NoLiveAdapterError) {
        throw new AlternateError(503, AlternateErrorCode.Unavailable, `${model} is not available on this service: the video provider is not configured`);
      }
      throw new AlternateError(503, AlternateErrorCode.Unavailable, 'the alternate video provider is not configured on this service');
    }
    if (resolved.provider instanceof SandboxAlternateVideoProvider && !resolved.provider.available()) {
      throw new AlternateError(503, AlternateErrorCode.Unavailable, 'alternate video generation is temporarily unavailable; try again later', undefined, { 'retry-after': '30' });
    }
    return resolved;
  }

  /** The normalized task; links are minted now and never stored. */
  async toResource(task: AlternateTaskEntity): Promise<AlternateTaskResponseDto> {
    const now = this.clock.now();
    const outputs: AlternateTaskResponseDto['outputs'] = { videos: [], images: [] };
    if (task.status === 'succeeded' && task.expiresAt) {
      outputs.expiresAt = task.expiresAt.toISOString();
      if (task.expiresAt.getTime() > now.getTime() && task.mediaKey !== null && task.mediaDeletedAt === null) {
        const ttl = Math.max(1, Math.min(ALTERNATE_LINK_TTL_SECONDS, Math.floor((task.expiresAt.getTime() - now.getTime()) / 1000)));
        const link = await this.media.signedLink(task.mediaKey, ttl).catch((error: unknown) => {
          if (!(error instanceof MediaNotFoundError)) throw error;
          this.logger.warn(`task ${task.id}: media ${task.mediaKey} is missing before its expiry`);
          return null;
        });
        if (link) {
          outputs.videos = [link.url];
          outputs.urlsExpireAt = link.expiresAt.toISOString();
        }
      }
    }
    const usage: AlternateTaskResponseDto['usage'] = { requestedSeconds: task.durationSeconds };
    if (task.status === 'succeeded' && task.outputSeconds !== null) {
      usage.outputSeconds = Math.round(task.outputSeconds * 1000) / 1000;
      usage.billedSeconds = Math.min(Math.round(task.outputSeconds * 10) / 10, task.durationSeconds);
    }
    if (task.status === 'succeeded' && task.chargedMicros !== null) usage.chargedUsd = microsToUsd(task.chargedMicros);
    if (task.status === 'failed') usage.chargedUsd = 0;
    const resource: AlternateTaskResponseDto = {
      id: task.id,
      model: task.model,
      status: task.status,
      mode: task.mode,
      kind: task.request.kind === 'image2video' ? 'image_to_video' : 'text_to_video',
      ...(task.request.kind === 'text2video' ? { aspectRatio: task.request.aspectRatio } : {}),
      outputs,
      usage,
      createdAt: task.createdAt.toISOString(),
      updatedAt: task.updatedAt.toISOString(),
    };
    if (task.phase === 'reconciliationRequired' && (task.status === 'queued' || task.status === 'running')) resource.phase = 'reconciliationRequired';
    if (task.status === 'failed' && task.failureReason) resource.failureReason = task.failureReason;
    return resource;
  }
}
