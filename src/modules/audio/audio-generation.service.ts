import { Inject, Injectable } from '@nestjs/common';
import { Clock, DomainError, microsToUsd, newId } from '../../../libs/common/index.js';
import { type AudioProvider, NoLiveAdapterError, ProviderRegistry, type SpeechInput } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import type { TransactionHandle } from '../../database/transaction.js';
import { AUDIO_PROCESS_JOB, AUDIO_QUEUE } from './audio-jobs.js';
import { type CreationJob, type CreationKind, type CreationOutcome, TaskCreations } from '../../queue/task-creations.js';
import { type HoldInput, PriceCatalogue } from '../billing/index.js';
import { WalletService } from '../billing/wallet.service.js';
import type { AuthenticatedKey } from '../identity/index.js';
import { AUDIO_HOLD_SUBJECT, AUDIO_JOB_OPTIONS, AUDIO_MAX_DIALOGUE_VOICES, type AudioEndpoint, audioJobId } from './audio.constants.js';
import { AudioErrorCode, audioInvalid } from './audio-errors.js';
import { requestHash } from './audio-idempotency.js';
import { AudioIdempotencyRepository, type IdempotencyScope } from './audio-idempotency.repository.js';
import { canonicalRequest, validateAudioRequest, type ValidatedAudioRequest } from './audio-rules.js';
import { AudioIdempotencyEntity, AudioTaskEntity } from './audio-task.entity.js';
import { AudioTaskPresenter } from './audio-task.presenter.js';
import { AudioTaskRepository, type DecidedRequest } from './audio-task.repository.js';
import type { AudioEstimateDto, AudioTaskResponseDto } from './audio-task.resource.js';
import type { CreateAudioGenerationDto } from './dto/create-audio-generation.dto.js';
import { VoiceResolver } from './voices/voice-resolver.js';
import { WebhookEndpointDirectory } from './webhook-endpoint-directory.js';
import { newPaidTaskRow } from '../../database/paid-task-columns.js';

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
 * Creation of an audio task (DESIGN §6): validate → 503 check → resolve voices → webhook endpoint →
 * price → one transaction shared with concurrent creations (TaskCreations: idempotent replay,
 * idempotency claim, pending limit under a per-key lock, hold, task row, idempotency row) →
 * enqueue. Every refusal happens before the hold; a decided key replays even when the checks
 * before the transaction would now refuse it.
 */
@Injectable()
export class AudioGenerationService {
  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly idempotency: AudioIdempotencyRepository,
    private readonly presenter: AudioTaskPresenter,
    private readonly wallet: WalletService,
    private readonly prices: PriceCatalogue,
    private readonly registry: ProviderRegistry,
    private readonly voices: VoiceResolver,
    @Inject(WebhookEndpointDirectory) private readonly webhooks: WebhookEndpointDirectory,
    private readonly creations: TaskCreations,
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
    let accepted: Accepted;
    try {
      accepted = await this.accept(key, request);
    } catch (error) {
      // A decided key answers whatever the checks say now (an alias deleted since must not break
      // a replay); when they pass, the creation's transaction looks the key up first instead.
      const decided = scope ? await this.idempotency.find(scope) : null;
      if (decided) return this.replay(key, decided, hash);
      throw error;
    }
    const now = this.clock.now();
    const id = newId('audio');
    const jobDelayMs = options.streamLeaseMs !== undefined ? options.streamLeaseMs + STREAM_WATCHDOG_MARGIN_MS : 0;
    const input: AudioCreationInput = {
      key,
      scope,
      hash,
      amountMicros: accepted.amountMicros,
      row: newTaskRow({ id, key, accepted, endpoint: options.endpoint, now, streamLeaseMs: options.streamLeaseMs }),
      beforeHold: options.beforeHold,
      job: options.streamLeaseMs !== undefined || options.enqueue !== false ? { delayMs: jobDelayMs } : null,
    };
    // A caller's own writes (beforeHold) cannot be written set-based: such creations take a savepoint each.
    const outcome = await this.creations.create(options.beforeHold ? this.creationWithHook : this.creation, input);
    if ('decided' in outcome) return this.replay(key, outcome.decided, hash);
    return { task: await this.presenter.toResource(outcome.row), replayed: false };
  }

  /**
   * One creation in the transaction TaskCreations gives: an earlier decision of its key answers
   * (replay), else the key is claimed (409 while another request holds it) and looked up again,
   * the key's unfinished tasks are counted under its creation lock (429), then the caller's own
   * writes, the hold (402), the task row and the idempotency record. Every refusal throws, so
   * nothing of the creation stays.
   */
  private async writeOne(tx: TransactionHandle, input: AudioCreationInput): Promise<AudioWritten> {
    const { key, scope, row } = input;
    if (scope) {
      const early = await this.idempotency.find(scope, tx);
      if (early) return { decided: early };
      if (!(await this.idempotency.tryClaim(tx, scope))) throw requestInProgress();
      // Decided while this request was validating: the claim's transaction sees the committed row.
      const decided = await this.idempotency.find(scope, tx);
      if (decided) return { decided };
    }
    await this.tasks.lockCreationsOf(tx, key.id);
    const max = this.config.env.AUDIO_MAX_PENDING_PER_KEY;
    if ((await this.tasks.countPending(tx, key.id)) >= max) throw tooManyPending(max);
    await input.beforeHold?.(tx, { id: row.id, amountMicros: input.amountMicros });
    const task = withHold(row, await this.wallet.hold(holdOf(input), tx));
    await this.tasks.insert(tx, task);
    if (scope) await this.idempotency.insert(tx, idempotencyRecord(input));
    return { row: task };
  }

  /**
   * A batch of creations, set-based: two statements lock and read what every creation is judged
   * on (see `judge`; the idempotency records once, after the locks), one holds for all that pass,
   * two insert their rows and records. Judged in arrival order exactly as `writeOne` one after
   * another: when a refused hold would have changed the judgement of a later creation (its key's
   * pending count, its idempotency key), the batch is undone and TaskCreations does each creation
   * alone.
   */
  private async writeAll(tx: TransactionHandle, inputs: AudioCreationInput[]): Promise<Array<CreationOutcome<AudioWritten>>> {
    const scopes = inputs.map((input) => input.scope);
    const keyIds = inputs.map((input) => input.key.id);
    const max = this.config.env.AUDIO_MAX_PENDING_PER_KEY;
    const claimed = await this.tasks.lockCreationBatch(tx, scopes, keyIds);
    const state = await this.tasks.creationBatchState(tx, scopes, keyIds);
    const facts: BatchFacts = { claimed, decided: state.decided, pending: state.pending, max };
    const judged = judge(inputs, facts, new Set());
    const creating = judged.flatMap((judgement, i) => (judgement.kind === 'create' ? [i] : []));
    const holds = await this.wallet.holdEach(
      creating.map((i) => holdOf(inputs[i]!)),
      tx,
    );
    const refused = new Set(creating.filter((_, k) => typeof holds[k] !== 'string'));
    if (refused.size > 0 && !sameJudgements(judged, judge(inputs, facts, refused))) throw new Error('audio creation batch: a refused hold changes a later judgement');
    const holdIds = new Map(creating.map((i, k) => [i, holds[k]!]));
    const outcomes = judged.map((judgement, i): CreationOutcome<AudioWritten> => {
      if (judgement.kind === 'refuse') return { error: judgement.error };
      if (judgement.kind === 'decided') return { value: { decided: judgement.decided } };
      const hold = holdIds.get(i)!;
      return typeof hold === 'string' ? { value: { row: withHold(inputs[i]!.row, hold) } } : { error: hold };
    });
    const made = outcomes.flatMap((outcome, i) => ('value' in outcome && 'row' in outcome.value ? [{ row: outcome.value.row, input: inputs[i]! }] : []));
    await this.tasks.insertMany(
      tx,
      made.map(({ row }) => row),
    );
    await this.idempotency.insertMany(
      tx,
      made.flatMap(({ input }) => (input.scope ? [idempotencyRecord(input)] : [])),
    );
    return outcomes;
  }

  private readonly jobsOf = (written: AudioWritten, input: AudioCreationInput): CreationJob[] =>
    'row' in written && input.job
      ? [
          {
            queue: AUDIO_QUEUE,
            name: AUDIO_PROCESS_JOB,
            data: { taskId: written.row.id },
            jobId: audioJobId(written.row.id),
            options: { ...AUDIO_JOB_OPTIONS, ...(input.job.delayMs > 0 ? { delay: input.job.delayMs } : {}) },
          },
        ]
      : [];

  /** Creations of generations and speech: batches of them are written set-based. */
  private readonly creation: CreationKind<AudioCreationInput, AudioWritten> = {
    name: 'audio',
    write: (tx, input) => this.writeOne(tx, input),
    writeAll: (tx, inputs) => this.writeAll(tx, inputs),
    jobs: this.jobsOf,
  };

  /** Creations with the caller's own writes (a realtime turn): a savepoint each in a batch. */
  private readonly creationWithHook: CreationKind<AudioCreationInput, AudioWritten> = {
    name: 'audio-with-hook',
    write: (tx, input) => this.writeOne(tx, input),
    jobs: this.jobsOf,
  };

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
      // Spec › Authentication 2: a resource the key does not own is answered as not found.
      throw new DomainError(404, AudioErrorCode.WebhookEndpointNotFound, 'webhookEndpointId: no webhook endpoint with this id belongs to this API key');
    }
    // The hold covers every submitted character; billable characters are known after synthesis.
    const amountMicros = this.prices.speechCost({ workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment }, request.model, request.inputCharacters);
    return { request, adapter, inputs, amountMicros };
  }

  /**
   * Each distinct voice as written once (at most twenty, checked by the rules), in parallel; then
   * at most ten distinct voices as resolved (spec: an alias and its voice's id are one voice).
   */
  private async resolveVoices(key: AuthenticatedKey, request: ValidatedAudioRequest): Promise<SpeechInput[]> {
    const distinct = [...new Set(request.lines.map((line) => line.voice))];
    const owner = { apiKeyId: key.id, environment: key.environment };
    const resolved = await Promise.all(distinct.map(async (voice) => [voice, await this.voices.resolve(owner, voice, request.model)] as const));
    const official = new Map(resolved);
    const voices = new Set(resolved.map(([written, voiceId]) => voiceId ?? written));
    if (voices.size > AUDIO_MAX_DIALOGUE_VOICES) throw audioInvalid('dialogue', `${voices.size} distinct voices; at most ${AUDIO_MAX_DIALOGUE_VOICES}`);
    return request.lines.map((line, index) => {
      const voiceId = official.get(line.voice);
      if (!voiceId) {
        const field = request.mode === 'text_to_speech' ? 'controls.voiceId' : `dialogue.${index}.voiceId`;
        throw audioInvalid(field, `"${line.voice}" is not a usable voice of ${request.model} nor a saved alias of this key`, AudioErrorCode.VoiceUnsupported);
      }
      return { text: line.text, voiceId };
    });
  }

  private async replay(key: AuthenticatedKey, decided: DecidedRequest, hash: string): Promise<AudioCreation> {
    if (decided.requestHash !== hash) {
      throw new DomainError(409, AudioErrorCode.IdempotencyConflict, 'this Idempotency-Key was used with a different request; use a new key for a new request');
    }
    const task = await this.tasks.findOwned(key.id, decided.taskId);
    if (!task) throw new Error(`idempotency record of ${decided.taskId} without its task`);
    return { task: await this.presenter.toResource(task), replayed: true };
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

/** What one creation writes; its row's hold id is filled in when the hold is made. */
interface AudioCreationInput {
  key: AuthenticatedKey;
  scope: IdempotencyScope | undefined;
  hash: string;
  amountMicros: bigint;
  row: AudioTaskEntity;
  beforeHold: CreateAudioOptions['beforeHold'];
  /** Its job (delayed past a stream's lease), or null for a caller that runs the task itself. */
  job: { delayMs: number } | null;
}

/** A creation written (its row) or answered by an earlier decision of its idempotency key. */
type AudioWritten = { row: AudioTaskEntity } | { decided: DecidedRequest };

/** What a batch is judged on, read under its locks (see AudioTaskRepository.creationBatchState). */
interface BatchFacts {
  /** Per creation: its scope's claim is this batch's (true without a scope). */
  claimed: boolean[];
  /** Per creation: the record its scope decided, read after the locks (complete, so read once). */
  decided: Array<DecidedRequest | null>;
  pending: Map<string, number>;
  max: number;
}

type Judgement = { kind: 'create' } | { kind: 'decided'; decided: DecidedRequest } | { kind: 'refuse'; error: DomainError };

/**
 * `writeOne`'s decisions for a batch, in arrival order, before any hold: a creation earlier in
 * the batch counts as one more unfinished task of its key and decides its idempotency key for
 * the ones after it. `refusedHolds` are creations whose hold was refused (402): they count for
 * nothing, as a refused creation alone leaves nothing.
 */
function judge(inputs: AudioCreationInput[], facts: BatchFacts, refusedHolds: Set<number>): Judgement[] {
  const pending = new Map(facts.pending);
  const decidedHere = new Map<string, DecidedRequest>();
  return inputs.map((input, i): Judgement => {
    const { scope } = input;
    const scopeKey = scope ? `${scope.apiKeyId}|${scope.endpoint}|${scope.key}` : '';
    if (scope) {
      // A decided key replays even while another request holds its claim, as `writeOne`'s first lookup does.
      const decided = facts.decided[i] ?? decidedHere.get(scopeKey);
      if (decided) return { kind: 'decided', decided };
      if (!facts.claimed[i]) return { kind: 'refuse', error: requestInProgress() };
    }
    const count = pending.get(input.key.id) ?? 0;
    if (count >= facts.max) return { kind: 'refuse', error: tooManyPending(facts.max) };
    if (!refusedHolds.has(i)) {
      pending.set(input.key.id, count + 1);
      if (scope) decidedHere.set(scopeKey, { requestHash: input.hash, taskId: input.row.id });
    }
    return { kind: 'create' };
  });
}

const sameJudgements = (a: Judgement[], b: Judgement[]): boolean => a.every((judgement, i) => judgement.kind === b[i]!.kind);

const holdOf = (input: AudioCreationInput): HoldInput => ({
  workspaceId: input.key.workspaceId,
  environment: input.key.environment,
  apiKeyId: input.key.id,
  amountMicros: input.amountMicros,
  subjectType: AUDIO_HOLD_SUBJECT,
  subjectId: input.row.id,
});

const withHold = (row: AudioTaskEntity, holdId: string): AudioTaskEntity => Object.assign(new AudioTaskEntity(), row, { holdId });

/** Field by field: a spread of the scope followed by three properties took ~1.3 µs on Node 20 (paid-task-columns.ts). */
function idempotencyRecord(input: AudioCreationInput): AudioIdempotencyEntity {
  const record = new AudioIdempotencyEntity();
  record.apiKeyId = input.scope!.apiKeyId;
  record.endpoint = input.scope!.endpoint;
  record.key = input.scope!.key;
  record.requestHash = input.hash;
  record.taskId = input.row.id;
  record.createdAt = input.row.createdAt;
  return record;
}

const tooManyPending = (max: number): DomainError =>
  new DomainError(429, AudioErrorCode.TooManyPending, `this API key already has ${max} unfinished audio tasks; poll them and try again`, { 'retry-after': '5' });

const requestInProgress = (): DomainError =>
  new DomainError(409, AudioErrorCode.RequestInProgress, 'a request with this Idempotency-Key is still being decided; repeat it shortly', { 'retry-after': '1' });

function newTaskRow(input: { id: string; key: AuthenticatedKey; accepted: Accepted; endpoint: AudioEndpoint; now: Date; streamLeaseMs?: number }): AudioTaskEntity {
  const { request } = input.accepted;
  const streaming = input.streamLeaseMs !== undefined;
  return newPaidTaskRow(AudioTaskEntity, input.id, input.key, input.now, {
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
    contentType: null,
    mediaBytes: null,
    outputSeconds: null,
    inputCharacters: request.inputCharacters,
    billableCharacters: null,
    webhookEndpointId: request.webhookEndpointId ?? null,
  });
}
