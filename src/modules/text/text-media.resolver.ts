import { Injectable, Logger } from '@nestjs/common';
import { DomainError, GuardedHttpClient, OutboundRequestError } from '../../../libs/common/index.js';
import type { GeminiRequest } from '../../../libs/providers/index.js';
import { TextErrorCode } from './text-errors.js';
import { pendingMediaUrls } from './translation/media-parts.js';

/** Largest media file fetched for a text request. */
const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

/**
 * Fetches the HTTPS media links of a text request through the guarded client (DESIGN §7) and
 * inlines them, so the upstream never fetches a user-supplied URL itself. Data URLs were
 * decoded during translation; gs:// was refused there.
 */
@Injectable()
export class TextMediaResolver {
  private readonly logger = new Logger(TextMediaResolver.name);

  constructor(private readonly http: GuardedHttpClient) {}

  /** Null when the request links no media (most requests): nothing to wait for, no promise made. */
  resolve(request: GeminiRequest): Promise<unknown> | null {
    const parts = pendingMediaUrls(request);
    if (parts.length === 0) return null;
    return Promise.all(
      parts.map(async (part) => {
        const { fileUri, mimeType } = part.fileData!;
        let response;
        try {
          response = await this.http.request(fileUri, { method: 'GET', timeoutMs: 15_000, maxBytes: MAX_MEDIA_BYTES });
        } catch (error) {
          // http:// (allowed by the translation for local development) when this service does not allow it.
          if (error instanceof OutboundRequestError && error.reason === 'scheme_not_allowed') {
            throw new DomainError(400, TextErrorCode.InvalidField, `media ${fileUri}: must be an HTTPS URL or a base64 data URL`);
          }
          if (!(error instanceof OutboundRequestError)) throw error;
          // The client learns what was refused; what the name resolved to goes to the log only.
          this.logger.warn({ msg: 'text media could not be fetched', url: fileUri, reason: error.reason, detail: error.detail });
          throw new DomainError(422, TextErrorCode.MediaFetchFailed, `media ${fileUri} could not be fetched (${error.reason}: ${error.message})`);
        }
        if (response.status !== 200) {
          throw new DomainError(422, TextErrorCode.MediaFetchFailed, `media ${fileUri} answered HTTP ${response.status}`);
        }
        const type = response.headers['content-type']?.split(';')[0]?.trim();
        delete part.fileData;
        part.inlineData = {
          mimeType: type && type !== 'application/octet-stream' ? type : (mimeType ?? 'application/octet-stream'),
          data: response.body.toString('base64'),
        };
      }),
    );
  }
}
