import { Injectable, Logger } from '@nestjs/common';
import { GuardedHttpClient, OutboundRequestError } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { AlternateErrorCode, alternateInvalid } from './alternate-errors.js';
import type { ImageSummary } from './alternate-task.entity.js';

/** The upstream takes JPEG or PNG images of at most 10 MB (upstreams.md §3.2). */
export const ALTERNATE_MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
const DATA_URL = /^data:(?:image\/(?:png|jpeg|jpg))?;base64,/i;
const MAX_BASE64_CHARACTERS = Math.ceil(ALTERNATE_MAX_IMAGE_BYTES / 3) * 4;

export interface LoadedImage {
  /** Raw Base64 of the validated bytes: what the upstream is sent (what we checked is what it gets). */
  base64: string;
  summary: ImageSummary;
}

/**
 * Validates `image` / `imageTail` before any hold, like video media: an HTTPS URL is fetched
 * through the guarded client (DESIGN §7: checked addresses, no redirects, 10 MiB cap, 30 s);
 * Base64 (raw or a `data:` URL) is decoded; the bytes must be a JPEG or a PNG. Any refusal is a
 * 400 `provider.invalid_image` in the alternate envelope naming the field.
 */
@Injectable()
export class AlternateImageLoader {
  private readonly logger = new Logger(AlternateImageLoader.name);

  constructor(
    private readonly http: GuardedHttpClient,
    private readonly config: AppConfig,
  ) {}

  async load(field: 'image' | 'imageTail', source: string): Promise<LoadedImage> {
    if (/^https?:\/\//i.test(source)) {
      if (/^http:/i.test(source) && !this.config.env.OUTBOUND_ALLOW_HTTP) throw invalid(field, 'must be an https:// URL or Base64 image data');
      const bytes = await this.fetch(field, source);
      return { base64: bytes.toString('base64'), summary: { source: 'url', location: locationOf(source), mimeType: sniff(field, bytes), bytes: bytes.length } };
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) throw invalid(field, 'must be an https:// URL or Base64 image data');
    const bytes = decodeBase64(field, source);
    return { base64: bytes.toString('base64'), summary: { source: 'base64', mimeType: sniff(field, bytes), bytes: bytes.length } };
  }

  private async fetch(field: string, url: string): Promise<Buffer> {
    let response;
    try {
      response = await this.http.request(url, { method: 'GET', timeoutMs: FETCH_TIMEOUT_MS, maxBytes: ALTERNATE_MAX_IMAGE_BYTES });
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      if (error.reason === 'scheme_not_allowed' || error.reason === 'invalid_url') throw invalid(field, 'must be an https:// URL or Base64 image data');
      this.logger.warn({ msg: 'alternate image could not be fetched', field, reason: error.reason, detail: error.detail });
      throw invalid(field, `could not be fetched (${error.reason}: ${error.message})`);
    }
    if (response.status !== 200) throw invalid(field, `the server answered HTTP ${response.status}`);
    return response.body;
  }
}

const invalid = (field: string, why: string) => alternateInvalid(field, why, AlternateErrorCode.InvalidImage);

function decodeBase64(field: string, source: string): Buffer {
  const header = DATA_URL.exec(source.slice(0, 64));
  const payload = header ? source.slice(header[0].length) : source;
  if (/^data:/i.test(source) && !header) throw invalid(field, 'a data URL must be data:image/png or image/jpeg;base64,<data>');
  if (payload.length > MAX_BASE64_CHARACTERS) throw invalid(field, `is larger than ${ALTERNATE_MAX_IMAGE_BYTES} bytes`);
  const bytes = Buffer.from(payload, 'base64');
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  if (payload.length === 0 || payload.length % 4 !== 0 || bytes.length !== (payload.length / 4) * 3 - padding) {
    throw invalid(field, 'must be an https:// URL or Base64 image data');
  }
  return bytes;
}

function sniff(field: string, bytes: Buffer): ImageSummary['mimeType'] {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  throw invalid(field, 'is not a JPEG or PNG image');
}

function locationOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.slice(0, 512);
  } catch {
    return '';
  }
}
