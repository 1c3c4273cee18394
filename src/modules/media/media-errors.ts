import { DomainError } from '../../../libs/common/index.js';

/** Error codes of the media routes; relative, so they read `media.<code>` on `/media/…`. */
export enum MediaErrorCode {
  InvalidSignature = 'invalid_signature',
  LinkExpired = 'link_expired',
  NotFound = 'not_found',
  RangeNotSatisfiable = 'range_not_satisfiable',
}

/**
 * The object is missing, deleted or past its retention. Relative code: on a media route it
 * reads `media.not_found`; when a domain service lets it through (minting a link for a task's
 * output) it reads as that domain's `not_found`. Callers may catch it with `instanceof`.
 */
export class MediaNotFoundError extends DomainError {
  constructor(what = 'media') {
    super(404, MediaErrorCode.NotFound, `${what} not found (deleted, expired or never stored)`);
    this.name = 'MediaNotFoundError';
  }
}
