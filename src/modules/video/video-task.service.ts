import { Injectable, Logger } from '@nestjs/common';
import { Clock, type Page, decodeCursor, DEFAULT_PAGE_LIMIT, DomainError, isIdOf, newId, toPage } from '../../../libs/common/index.js';
import { NoLiveAdapterError, ProviderRegistry, type VideoProvider } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { type HoldInput, PriceCatalogue } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { MediaNotFoundError } from '../media/index.js';
import { MediaService } from '../media/media.service.js';
import { type CreationKind, type CreationOutcome, holdThenRow, TaskCreations } from '../../queue/task-creations.js';
import type { CreateVideoTaskDto, ListVideoTasksQueryDto } from './dto/create-video-task.dto.js';
import { HOLD_SUBJECT, VIDEO_LINK_TTL_SECONDS } from './video.constants.js';
import { VIDEO_JOB_OPTIONS, VIDEO_PROCESS_JOB, VIDEO_QUEUE, videoJobId } from './video-jobs.js';
import { VideoErrorCode, videoTaskNotFound } from './video-errors.js';
import { resolveVideoRequest } from './video-rules.js';
import { VideoTaskEntity } from './video-task.entity.js';
import { VideoTaskRepository } from './video-task.repository.js';
import type { VideoTaskResponseDto } from './video-task.resource.js';
import { GenerationTaskReaders, type SharedTaskListEntry } from './generation-task-readers.service.js';
import { newPaidTaskRow } from '../../database/paid-task-columns.js';


/** What one video creation writes: its hold and its row (the hold id is filled in when made). */
interface VideoCreation {
  hold: HoldInput;
  row: VideoTaskEntity;
}

const withHold = (row: VideoTaskEntity, holdId: string): VideoTaskEntity => Object.assign(new VideoTaskEntity(), row, { holdId });

/**
 * The omni video use cases the controller calls: create (validate → 503 check → hold + row in
 * one transaction, shared with concurrent creations → enqueue), read with fresh links, list,
 * and the refused delete.
 */
@Injectable()
export class VideoTaskService {
  private readonly logger = new Logger(VideoTaskService.name);

  constructor(
    private readonly tasks: VideoTaskRepository,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly registry: ProviderRegistry,
    private readonly media: MediaService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly readers: GenerationTaskReaders,
    private readonly creations: TaskCreations,
  ) {}

  /**
   * One creation: hold, then the `queued` row with that hold, in the transaction TaskCreations
   * gives; a batch of them is two statements (every hold in arrival order, every row), and the
   * jobs go with one `addBulk`.
   */
  private readonly creation: CreationKind<VideoCreation, VideoTaskEntity> = {
    ...holdThenRow<HoldInput, VideoTaskEntity>(
      'video',
      { hold: (hold, tx) => this.wallet.hold(hold, tx), withHold, insert: (tx, task) => this.tasks.insert(tx, task) },
      (task) => [{ queue: VIDEO_QUEUE, name: VIDEO_PROCESS_JOB, data: { taskId: task.id }, jobId: videoJobId(task.id), options: VIDEO_JOB_OPTIONS }],
    ),
    writeAll: async (tx, creations) => {
      const holds = await this.wallet.holdEach(
        creations.map((creation) => creation.hold),
        tx,
      );
      const outcomes = creations.map(({ row }, i): CreationOutcome<VideoTaskEntity> => {
        const hold = holds[i]!;
        return typeof hold === 'string' ? { value: withHold(row, hold) } : { error: hold };
      });
      await this.tasks.insertMany(tx, outcomes.flatMap((outcome) => ('value' in outcome ? [outcome.value] : [])));
      return outcomes;
    },
  };

  async create(key: AuthenticatedKey, dto: CreateVideoTaskDto): Promise<VideoTaskResponseDto> {
    const snapshot = resolveVideoRequest(dto, { allowHttp: this.config.env.OUTBOUND_ALLOW_HTTP });
    const { adapter, provider } = this.provider(dto.model, key.environment);
    if (!provider.available()) {
      throw new DomainError(503, VideoErrorCode.Unavailable, 'video generation is temporarily unavailable; try again later', { 'retry-after': '30' });
    }
    const now = this.clock.now();
    const id = newId('omni');
    const amountMicros = this.prices.videoMaxCost({ workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment }, dto.model, snapshot.controls.resolution);
    const row = newPaidTaskRow(VideoTaskEntity, id, key, now, {
      model: dto.model,
      mode: snapshot.mode,
      request: snapshot,
      adapter,
      status: 'queued',
      phase: null,
      upstreamOperation: null,
      submitAttempts: 0,
      pollAttempts: 0,
      pollErrors: 0,
      submittedAt: null,
      reconciledAt: null,
      mediaBytes: null,
      outputSeconds: null,
    });
    const hold = { workspaceId: key.workspaceId, environment: key.environment, apiKeyId: key.id, amountMicros, subjectType: HOLD_SUBJECT, subjectId: id };
    // Hold + row commit together (with the creations arriving meanwhile), then the job is added.
    const task = await this.creations.create(this.creation, { hold, row });
    return this.toResource(task);
  }

  /** An omni task, or another domain's (`alt:`) through the reader it registered. */
  async get(key: AuthenticatedKey, id: string): Promise<VideoTaskResponseDto | object> {
    const reader = this.readers.readerFor(id);
    if (reader) return (await reader.get(key, id)) ?? Promise.reject(videoTaskNotFound());
    return this.toResource(await this.owned(key, id));
  }

  /** The caller's omni tasks and those of every registered reader, merged newest first. */
  async list(key: AuthenticatedKey, query: ListVideoTasksQueryDto): Promise<Page<VideoTaskResponseDto | object>> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const filter = { limit, after: decodeCursor(query.after), status: query.status, model: query.model };
    const rows = await this.tasks.listOwned(key.id, filter);
    const entries: SharedTaskListEntry[] = rows.map((row) => ({ id: row.id, createdAt: row.createdAt, render: () => this.toResource(row) }));
    for (const reader of this.readers.all()) entries.push(...(await reader.list(key, filter)));
    entries.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const page = toPage(entries, limit, (entry) => entry);
    return { ...page, items: await Promise.all(page.items.map((entry) => entry.render())) };
  }

  /** Video tasks cannot be cancelled or deleted (spec, Endpoints › Video 4); another domain's reader answers for its own. */
  async delete(key: AuthenticatedKey, id: string): Promise<never> {
    const reader = this.readers.readerFor(id);
    if (reader) {
      await reader.delete(key, id);
      throw videoTaskNotFound();
    }
    await this.owned(key, id);
    throw new DomainError(405, VideoErrorCode.OperationNotSupported, 'video tasks cannot be cancelled or deleted', { allow: 'GET' });
  }

  private async owned(key: AuthenticatedKey, id: string): Promise<VideoTaskEntity> {
    if (!isIdOf('omni', id)) throw videoTaskNotFound();
    const task = await this.tasks.findOwned(key.id, id);
    if (!task) throw videoTaskNotFound();
    return task;
  }

  private provider(model: string, environment: AuthenticatedKey['environment']): { adapter: string; provider: VideoProvider } {
    try {
      return this.registry.resolve<VideoProvider>({ capability: 'video', model, environment });
    } catch (error) {
      // No Retry-After: neither case passes by waiting, it takes an operator.
      if (error instanceof NoLiveAdapterError) {
        throw new DomainError(503, VideoErrorCode.Unavailable, `${model} is not available on this service: its upstream provider is not configured`);
      }
      throw new DomainError(503, VideoErrorCode.Unavailable, 'video generation is not configured on this service');
    }
  }

  /** The spec's task shape; links are minted now and never stored. */
  private async toResource(task: VideoTaskEntity): Promise<VideoTaskResponseDto> {
    const now = this.clock.now();
    const outputs: VideoTaskResponseDto['outputs'] = { videos: [], images: [] };
    if (task.status === 'succeeded' && task.expiresAt) {
      outputs.expiresAt = task.expiresAt.toISOString();
      const retained = task.expiresAt.getTime() > now.getTime() && task.mediaKey !== null && task.mediaDeletedAt === null;
      if (retained) {
        const ttl = Math.max(1, Math.min(VIDEO_LINK_TTL_SECONDS, Math.floor((task.expiresAt.getTime() - now.getTime()) / 1000)));
        // The object can be gone at the very edge of retention (the sweeper's clock) or lost from
        // storage: the task still answers, with no link, rather than a 404 for a task that exists.
        const link = await this.media.signedLink(task.mediaKey!, ttl).catch((error: unknown) => {
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
    const resource: VideoTaskResponseDto = {
      id: task.id,
      model: task.model,
      status: task.status,
      outputs,
      createdAt: task.createdAt.toISOString(),
      updatedAt: task.updatedAt.toISOString(),
    };
    if (task.phase === 'reconciliationRequired' && (task.status === 'queued' || task.status === 'running')) resource.phase = 'reconciliationRequired';
    if (task.status === 'failed' && task.failureReason) resource.failureReason = task.failureReason;
    return resource;
  }
}
