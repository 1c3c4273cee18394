import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, DomainError, microsToUsd, newId } from '../../../libs/common/index.js';
import { type AudioProvider, NoLiveAdapterError, ProviderRegistry, type SpeechInput } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import type { TransactionHandle } from '../../database/transaction.js';
import { AUDIO_PROCESS_JOB, AUDIO_QUEUE } from './audio-jobs.js';
import { Queues } from '../../queue/queues.js';
import { PriceCatalogue } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { AUDIO_HOLD_SUBJECT, AUDIO_JOB_OPTIONS, type AudioEndpoint, audioJobId } from './audio.constants.js';
import { AudioErrorCode, audioInvalid } from './audio-errors.js';
import { requestHash } from './audio-idempotency.js';
import { AudioIdempotencyRepository, type IdempotencyScope } from './audio-idempotency.repository.js';
import { canonicalRequest, validateAudioRequest, type ValidatedAudioRequest } from './audio-rules.js';
import { AudioIdempotencyEntity, AudioTaskEntity } from './audio-task.entity.js';
import { AudioTaskPresenter } from './audio-task.presenter.js';
import { AudioTaskRepository } from './audio-task.repository.js';
import type { AudioEstimateDto, AudioTaskResponseDto } from './audio-task.resource.js';
import type { CreateAudioGenerationDto } from './dto/create-audio-generation.dto.js';
import { VoiceResolver } from './voices/voice-resolver.js';
import { WebhookEndpointDirectory } from './webhook-endpoint-directory.js';

export interface CreateAudioOptions {
  /** The idempotency scope and the task's origin: `generations` (POST /v1/audio/generations) or `speech`. */
  endpoint: AudioEndpoint;
  /** The parsed `Idempotency-Key` header (parseIdempotencyKey), if any. */
  idempotencyKey?: string;
  /** False for a caller that runs the task itself (streaming speech); the reconciler still owns it if that caller dies. */
  enqueue?: boolean;
  /**
   * Streaming speech: the task is created already `processing`/`streaming` under a lease of this
   * many ms (the caller calls the upstream itself and extends the lease), and its job is enqueued
   * delayed past the lease: a watchdog that reconciles the task if the caller dies mid-stream.
   */
  streamLeaseMs?: number;
  /**
   * Runs inside the creation transaction, before the hold: a caller's own writes that must commit
   * with the task or not at all (a realtime turn's budget allocation and turn row). Throwing
   * rolls back everything: no hold, no task.
   */
  beforeHold?: (tx: TransactionHandle, task: { id: string; amountMicros: bigint }) => Promise<void>;
}

export interface AudioCreation {
  task: AudioTaskResponseDto;
  /** True when the key had already decided this request: the task is the earlier one (`Idempotency-Replay: true`). */
  replayed: boolean;
}

/** The pre-transaction checks' answer: what the task row will hold. */
interface Accepted {
  request: ValidatedAudioRequest;
  adapter: string;
  inputs: SpeechInput[];
  amountMicros: bigint;
}

/**
 * Creation of an audio task (DESIGN §6): validate → idempotent replay → 503 check → resolve voices →
 * webhook endpoint → price → one transaction (idempotency claim, pending limit under a per-key lock,
 * hold, task row, idempotency row) → enqueue. Every refusal happens before the hold.
 */
@Injectable()
export class AudioGenerationService {
  private readonly logger = new Logger(AudioGenerationService.name);

  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly idempotency: AudioIdempotencyRepository,
    private readonly presenter: AudioTaskPresenter,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly registry: ProviderRegistry,
    private readonly voices: VoiceResolver,
    @Inject(WebhookEndpointDirectory) private readonly webhooks: WebhookEndpointDirectory,
    private readonly queues: Queues,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async create(key: AuthenticatedKey, dto: CreateAudioGenerationDto, options: CreateAudioOptions): Promise<AudioCreation> {
    const request = validateAudioRequest(dto);
    if (options.endpoint !== 'generations' && request.mode !== 'text_to_speech') {
      throw audioInvalid('mode', 'the speech stream takes text_to_speech only', AudioErrorCode.UnsupportedMode);
    }
    const hash = requestHash(canonicalRequest(request));
    const scope: IdempotencyScope | undefined = options.idempotencyKey ? { apiKeyId: key.id, endpoint: options.endpoint, key: options.idempotencyKey } : undefined;
    if (scope) {
      // A decided key answers without any lookup: an alias deleted since must not break a replay.
      const decided = await this.idempotency.find(scope);
      if (decided) return this.replay(key, decided, hash);
    }
    const accepted = await this.accept(key, request);
    const now = this.clock.now();
    const id = newId('audio');
    const outcome = await this.tasks.transaction(async (tx) => {
      if (scope) {
        if (!(await this.idempotency.tryClaim(tx, scope))) throw requestInProgress();
        // Decided while this request was validating: the claim's transaction sees the committed row.
        const decided = await this.idempotency.find(scope, tx);
        if (decided) return { decided };
      }
      await this.tasks.lockCreationsOf(tx, key.id);
      const max = this.config.env.AUDIO_MAX_PENDING_PER_KEY;
      if ((await this.tasks.countPending(tx, key.id, max)) >= max) {
        throw new DomainError(429, AudioErrorCode.TooManyPending, `this API key already has ${max} unfinished audio tasks; poll them and try again`, { 'retry-after': '5' });
      }
      await options.beforeHold?.(tx, { id, amountMicros: accepted.amountMicros });
      const holdId = await this.wallet.hold(
        { workspaceId: key.workspaceId, environment: key.environment, apiKeyId: key.id, amountMicros: accepted.amountMicros, subjectType: AUDIO_HOLD_SUBJECT, subjectId: id },
        tx,
      );
      const row = newTaskRow({ id, key, accepted, endpoint: options.endpoint, holdId, now, streamLeaseMs: options.streamLeaseMs });
      await this.tasks.insert(tx, row);
      if (scope) {
        await this.idempotency.insert(tx, Object.assign(new AudioIdempotencyEntity(), { ...scope, requestHash: hash, taskId: id, createdAt: now }));
      }
      return { row };
    });
    if ('decided' in outcome) return this.replay(key, outcome.decided!, hash);
    if (options.streamLeaseMs !== undefined) await this.enqueue(id, options.streamLeaseMs + STREAM_WATCHDOG_MARGIN_MS);
    else if (options.enqueue !== false) await this.enqueue(id);
    return { task: await this.presenter.toResource(outcome.row), replayed: false };
  }

  /** The same checks as creation, then the price of the submitted characters: no hold, no row, no job. */
  async estimate(key: AuthenticatedKey, dto: CreateAudioGenerationDto): Promise<AudioEstimateDto> {
    const accepted = await this.accept(key, validateAudioRequest(dto));
    const { request } = accepted;
    return {
      model: request.model,
      mode: request.mode,
      inputCharacters: request.inputCharacters,
      // The upstream bills what it was sent; rounding may move the final count a little.
      billableCharacters: request.inputCharacters,
      estimatedUsd: microsToUsd(accepted.amountMicros),
    };
  }

  /** Everything checked before money moves; each refusal is a 4xx or 503 with an `audio.` code. */
  private async accept(key: AuthenticatedKey, request: ValidatedAudioRequest): Promise<Accepted> {
    const { adapter, provider } = this.provider(request.model, key.environment);
    if (!provider.available()) {
      throw new DomainError(503, AudioErrorCode.Unavailable, 'audio generation is temporarily unavailable; try again later', { 'retry-after': '30' });
    }
    const inputs = await this.resolveVoices(key, request);
    if (request.webhookEndpointId !== undefined && !(await this.webhooks.ownedBy(key.id, request.webhookEndpointId))) {
      throw audioInvalid('webhookEndpointId', 'no webhook endpoint with this id belongs to this API key', AudioErrorCode.WebhookEndpointNotFound);
    }
    // The hold covers every submitted character; billable characters are known after synthesis.
    const amountMicros = this.prices.speechCost({ workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment }, request.model, request.inputCharacters);
    return { request, adapter, inputs, amountMicros };
  }

  /** Each distinct voice once (at most ten, checked by the rules), in parallel. */
  private async resolveVoices(key: AuthenticatedKey, request: ValidatedAudioRequest): Promise<SpeechInput[]> {
    const distinct = [...new Set(request.lines.map((line) => line.voice))];
    const owner = { apiKeyId: key.id, environment: key.environment };
    const resolved = await Promise.all(distinct.map(async (voice) => [voice, await this.voices.resolve(owner, voice, request.model)] as const));
    const official = new Map(resolved);
    return request.lines.map((line, index) => {
      const voiceId = official.get(line.voice);
      if (!voiceId) {
        const field = request.mode === 'text_to_speech' ? 'controls.voiceId' : `dialogue.${index}.voiceId`;
        throw audioInvalid(field, `"${line.voice}" is not a usable voice of ${request.model} nor a saved alias of this key`, AudioErrorCode.VoiceUnsupported);
      }
      return { text: line.text, voiceId };
    });
  }

  private async replay(key: AuthenticatedKey, decided: AudioIdempotencyEntity, hash: string): Promise<AudioCreation> {
    if (decided.requestHash !== hash) {
      throw new DomainError(409, AudioErrorCode.IdempotencyConflict, 'this Idempotency-Key was used with a different request; use a new key for a new request');
    }
    const task = await this.tasks.findOwned(key.id, decided.taskId);
    if (!task) throw new Error(`idempotency record of ${decided.taskId} without its task`);
    return { task: await this.presenter.toResource(task), replayed: true };
  }

  private async enqueue(id: string, delayMs = 0): Promise<void> {
    try {
      await this.queues.add(AUDIO_QUEUE, AUDIO_PROCESS_JOB, { taskId: id }, audioJobId(id), { ...AUDIO_JOB_OPTIONS, ...(delayMs > 0 ? { delay: delayMs } : {}) });
    } catch (error) {
      // The row and its hold are committed: the reconciler enqueues it once Redis answers again.
      this.logger.error(`enqueue of ${id} failed; the reconciler will retry: ${String(error)}`);
    }
  }

  private provider(model: string, environment: AuthenticatedKey['environment']): { adapter: string; provider: AudioProvider } {
    try {
      return this.registry.resolve<AudioProvider>({ capability: 'audio', model, environment });
    } catch (error) {
      // No Retry-After: neither case passes by waiting, it takes an operator.
      if (error instanceof NoLiveAdapterError) {
        throw new DomainError(503, AudioErrorCode.Unavailable, `${model} is not available on this service: its upstream provider is not configured`);
      }
      throw new DomainError(503, AudioErrorCode.Unavailable, 'audio generation is not configured on this service');
    }
  }
}

/** The watchdog runs this long after the first lease would expire, so a live stream has renewed it by then. */
const STREAM_WATCHDOG_MARGIN_MS = 1000;

const requestInProgress = (): DomainError =>
  new DomainError(409, AudioErrorCode.RequestInProgress, 'a request with this Idempotency-Key is still being decided; repeat it shortly', { 'retry-after': '1' });

function newTaskRow(input: { id: string; key: AuthenticatedKey; accepted: Accepted; endpoint: AudioEndpoint; holdId: string; now: Date; streamLeaseMs?: number }): AudioTaskEntity {
  const { request } = input.accepted;
  const streaming = input.streamLeaseMs !== undefined;
  return Object.assign(new AudioTaskEntity(), {
    id: input.id,
    apiKeyId: input.key.id,
    workspaceId: input.key.workspaceId,
    environment: input.key.environment,
    model: request.model,
    mode: request.mode,
    endpoint: input.endpoint,
    request: {
      inputs: input.accepted.inputs,
      outputFormat: request.outputFormat,
      ...(request.languageCode !== undefined ? { languageCode: request.languageCode } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.applyTextNormalization !== undefined ? { applyTextNormalization: request.applyTextNormalization } : {}),
    },
    adapter: input.accepted.adapter,
    status: streaming ? 'processing' : 'queued',
    phase: streaming ? 'streaming' : null,
    attempts: streaming ? 1 : 0,
    submittedAt: streaming ? input.now : null,
    leaseExpiresAt: streaming ? new Date(input.now.getTime() + input.streamLeaseMs!) : null,
    mediaKey: null,
    contentType: null,
    mediaBytes: null,
    outputSeconds: null,
    inputCharacters: request.inputCharacters,
    billableCharacters: null,
    chargedMicros: null,
    holdId: input.holdId,
    webhookEndpointId: request.webhookEndpointId ?? null,
    failureReason: null,
    completedAt: null,
    expiresAt: null,
    mediaDeletedAt: null,
    createdAt: input.now,
    updatedAt: input.now,
  } satisfies AudioTaskEntity);
}
