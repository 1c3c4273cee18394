import { RequestErrorCode } from '../../../libs/common/index.js';
import type { ErrorCase } from '../../app/openapi-errors.js';
import { AudioErrorCode as Code } from './audio-errors.js';

/** The 400s of a generation request (create, estimate, speech), before any hold. */
export const AUDIO_REQUEST_REFUSALS: readonly ErrorCase[] = [
  Code.InvalidField,
  Code.UnknownField,
  [Code.UnsupportedMode, 'the model does not offer the mode'],
  [Code.VoiceUnsupported, 'neither a saved alias of this key nor a usable voice of the model'],
  [Code.TextTooLong, 'over 2,000 characters'],
  RequestErrorCode.InvalidJson,
];

/** The 404 of a generation request (create, estimate, speech): spec › Authentication 2, a resource not owned is not found. */
export const AUDIO_WEBHOOK_NOT_FOUND: ErrorCase = [Code.WebhookEndpointNotFound, '`webhookEndpointId` names no webhook endpoint of this key (unknown, or another key\'s), before any hold'];

/** The 400s of the task lists' query. */
export const AUDIO_LIST_REFUSALS: readonly ErrorCase[] = [
  [Code.InvalidField, 'a malformed `limit`, `after` or `status`'],
  [Code.UnknownField, 'an unknown parameter'],
];

export const AUDIO_NOT_FOUND: ErrorCase = [Code.NotFound, 'missing, or owned by another key'];
