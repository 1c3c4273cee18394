import { DomainError } from '../../../libs/common/index.js';

/** Every error code of the audio task routes (spec › Errors › Audio; DESIGN §4: all `audio.`). */
export enum AudioErrorCode {
  InvalidField = 'audio.invalid_field',
  UnknownField = 'audio.unknown_field',
  /** The mode is not offered by the model (`voice_v4_turbo` speaks single-speaker only). */
  UnsupportedMode = 'audio.unsupported_mode',
  /** A voice that is neither a saved alias of this key nor a usable official voice of the model. */
  VoiceUnsupported = 'audio.voice_unsupported',
  /** The text of one request is over 2,000 characters. */
  TextTooLong = 'audio.text_too_long',
  WebhookEndpointNotFound = 'audio.webhook_endpoint_not_found',
  InvalidIdempotencyKey = 'audio.invalid_idempotency_key',
  IdempotencyConflict = 'audio.idempotency_conflict',
  RequestInProgress = 'audio.request_in_progress',
  TooManyPending = 'audio.too_many_pending',
  InsufficientBalance = 'audio.insufficient_balance',
  Unavailable = 'audio.unavailable',
  /** Streaming speech: the upstream refused the request for good before any audio (the task failed, nothing charged). */
  GenerationRejected = 'audio.generation_rejected',
  /** Streaming speech: the upstream's answer was lost; the task is being reconciled (poll it, or repeat with the same key). */
  ReconciliationRequired = 'audio.reconciliation_required',
  /** Streaming speech replay: the request under this key ended failed; a new request needs a new key. */
  GenerationFailed = 'audio.generation_failed',
  /** Streaming speech replay: the audio of the request under this key is no longer stored. */
  ReplayExpired = 'audio.replay_expired',
  NotFound = 'audio.not_found',
}

export const audioInvalid = (field: string, why: string, code: AudioErrorCode = AudioErrorCode.InvalidField): DomainError =>
  new DomainError(400, code, `${field}: ${why}`);

export const audioTaskNotFound = (): DomainError => new DomainError(404, AudioErrorCode.NotFound, 'audio generation not found');
