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
  [Code.WebhookEndpointNotFound, 'no webhook endpoint of this key by that id'],
  RequestErrorCode.InvalidJson,
];

/** The 400s of the task lists' query. */
export const AUDIO_LIST_REFUSALS: readonly ErrorCase[] = [
  [Code.InvalidField, 'a malformed `limit`, `after` or `status`'],
  [Code.UnknownField, 'an unknown parameter'],
];

export const AUDIO_NOT_FOUND: ErrorCase = [Code.NotFound, 'missing, or owned by another key'];
