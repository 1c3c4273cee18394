import { Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DomainError, GuardedHttpClient, OutboundRequestError } from '../../../libs/common/index.js';
import type { ReferenceImage } from '../../../libs/providers/index.js';
import { ImageErrorCode, imageInvalid, referenceLabel } from './image-errors.js';
import { sniffImageType } from './image-sniffing.js';
import {
  IMAGE_MAX_REFERENCE_BYTES,
  IMAGE_MAX_REFERENCES_TOTAL_BYTES,
  IMAGE_REFERENCE_FETCH_TIMEOUT_MS,
} from './images.constants.js';

/** What the generation row keeps of a reference: never its bytes, and never a URL's query (signed URLs carry secrets there). */
export interface ReferenceSummary {
  source: 'url' | 'data';
  /** Origin and path of a URL reference. */
  location?: string;
  mimeType: ReferenceImage['mimeType'];
  bytes: number;
}

export interface LoadedReferences {
  images: ReferenceImage[];
  summaries: ReferenceSummary[];
}

/** `data:[type][;params];base64,<payload>`; the declared type is ignored (the bytes are sniffed). */
const DATA_URL = /^data:([a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?((?:;[a-z0-9-]+=[^;,]*)*);base64,/i;
/** Base64 text longer than this cannot decode to at most IMAGE_MAX_REFERENCE_BYTES. */
const MAX_BASE64_CHARACTERS = Math.ceil(IMAGE_MAX_REFERENCE_BYTES / 3) * 4;

/**
 * Turns the client's reference list into image bytes for the upstream, before any hold: Base64
 * data URLs are decoded, HTTPS URLs fetched through the guarded client (DESIGN §7: public
 * addresses only in production, no redirects, byte cap, timeout), and every image's type is
 * sniffed from its bytes. Any refusal is a 400 naming the reference by its index.
 *
 * Memory per request is bounded by the total cap, not by 14 × the per-image cap: the fetches,
 * which run in parallel, draw on one byte budget (the total cap less the decoded data URLs), and
 * the first fetch to overdraw it, or to fail, stops every other one at once.
 */
@Injectable()
export class ImageReferenceLoader {
  private readonly logger = new Logger(ImageReferenceLoader.name);

  constructor(private readonly http: GuardedHttpClient) {}

  async load(sources: readonly string[]): Promise<LoadedReferences> {
    // Syntax first: a malformed entry refuses the request before any outbound call.
    const parsed = sources.map((source, index) => parseSource(source, index));
    const inline = parsed.reduce((sum, entry) => sum + (entry.kind === 'data' ? entry.bytes.length : 0), 0);
    if (inline > IMAGE_MAX_REFERENCES_TOTAL_BYTES) throw totalTooLarge(inline);
    const fetches = new FetchBudget(IMAGE_MAX_REFERENCES_TOTAL_BYTES - inline);
    let loaded: Buffer[];
    try {
      loaded = await Promise.all(parsed.map((entry, index) => (entry.kind === 'data' ? Promise.resolve(entry.bytes) : this.fetch(entry.url, index, fetches))));
    } finally {
      fetches.stopAll();
    }
    const images: ReferenceImage[] = [];
    const summaries: ReferenceSummary[] = [];
    loaded.forEach((bytes, index) => {
      const mimeType = sniffImageType(bytes);
      if (!mimeType) {
        throw imageInvalid(ImageErrorCode.UnsupportedReferenceFormat, `${referenceLabel(index)}: not a PNG, JPEG, WebP, HEIC or HEIF image`);
      }
      images.push({ mimeType, bytes });
      const entry = parsed[index]!;
      summaries.push(entry.kind === 'data' ? { source: 'data', mimeType, bytes: bytes.length } : { source: 'url', location: locationOf(entry.url), mimeType, bytes: bytes.length });
    });
    return { images, summaries };
  }

  private async fetch(url: string, index: number, budget: FetchBudget): Promise<Buffer> {
    const label = referenceLabel(index);
    let body: Readable | undefined;
    try {
      const response = await this.http.requestStream(url, { method: 'GET', timeoutMs: IMAGE_REFERENCE_FETCH_TIMEOUT_MS, maxBytes: IMAGE_MAX_REFERENCE_BYTES });
      body = response.body;
      if (!budget.track(body)) throw budget.refusal!;
      if (response.status !== 200) {
        throw budget.fail(imageInvalid(ImageErrorCode.ReferenceFetchFailed, `${label}: the server answered HTTP ${response.status}`));
      }
      const chunks: Buffer[] = [];
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        if (!budget.take(chunk.length)) throw budget.fail(totalTooLarge());
      }
      return Buffer.concat(chunks);
    } catch (error) {
      // Another reference failed or overdrew the budget first, and this fetch was stopped for it.
      if (budget.refusal && error !== budget.refusal) throw budget.refusal;
      if (!(error instanceof OutboundRequestError)) throw error;
      if (error.reason === 'scheme_not_allowed' || error.reason === 'invalid_url') {
        throw budget.fail(imageInvalid(ImageErrorCode.InvalidReference, `${label}: must be an HTTPS URL or Base64 image data (raw, or a data URL)`));
      }
      // The client learns what was refused; what the name resolved to goes to the log only.
      this.logger.warn({ msg: 'image reference could not be fetched', index, reason: error.reason, detail: error.detail });
      throw budget.fail(imageInvalid(ImageErrorCode.ReferenceFetchFailed, `${label}: could not be fetched (${error.reason}: ${error.message})`));
    } finally {
      if (body) budget.untrack(body);
    }
  }
}

/** `total` when it is known (data URLs); a fetch is stopped as soon as the sum passes the cap. */
const totalTooLarge = (total?: number): DomainError =>
  imageInvalid(
    ImageErrorCode.ReferencesTooLarge,
    `assets.referenceImages: ${total === undefined ? 'together' : `${total} bytes in all,`} more than the ${IMAGE_MAX_REFERENCES_TOTAL_BYTES} bytes allowed`,
  );

/** The bytes the parallel fetches of one request may still read, and the bodies to stop when one of them fails. */
class FetchBudget {
  private used = 0;
  private readonly open = new Set<Readable>();
  /** The first refusal: once set, every other fetch stops and answers it. */
  refusal: DomainError | undefined;

  constructor(private readonly limit: number) {}

  /** False when the request is already refused (the body is destroyed at once). */
  track(body: Readable): boolean {
    if (this.refusal) {
      body.destroy();
      return false;
    }
    this.open.add(body);
    return true;
  }

  untrack(body: Readable): void {
    this.open.delete(body);
    body.destroy();
  }

  take(bytes: number): boolean {
    this.used += bytes;
    return this.used <= this.limit;
  }

  /** Records the request's refusal (the first one wins) and stops every other fetch. */
  fail(refusal: DomainError): DomainError {
    this.refusal ??= refusal;
    this.stopAll();
    return this.refusal;
  }

  stopAll(): void {
    for (const body of this.open) body.destroy();
    this.open.clear();
  }
}

type ParsedSource = { kind: 'data'; bytes: Buffer } | { kind: 'url'; url: string };

function parseSource(source: string, index: number): ParsedSource {
  const label = referenceLabel(index);
  if (/^gs:\/\//i.test(source)) {
    throw imageInvalid(ImageErrorCode.InvalidReference, `${label}: raw gs:// URIs are not accepted; use a signed HTTPS URL or Base64 data`);
  }
  if (/^data:/i.test(source)) {
    const header = DATA_URL.exec(source.slice(0, 256));
    if (!header) throw imageInvalid(ImageErrorCode.InvalidReference, `${label}: a data URL must be data:<type>;base64,<data>`);
    return { kind: 'data', bytes: decodeBase64(source.slice(header[0].length), label) };
  }
  if (/^https?:\/\//i.test(source)) return { kind: 'url', url: source };
  // Spec › Image generation: "HTTPS URLs or Base64 data": raw Base64 is taken as a data URL's
  // payload. Its size first: the alphabet check reads the whole text.
  if (BASE64_START.test(source)) {
    if (source.length <= MAX_BASE64_CHARACTERS && !BASE64_TEXT.test(source)) throw notAReference(label);
    return { kind: 'data', bytes: decodeBase64(source, label) };
  }
  throw notAReference(label);
}

const notAReference = (label: string): DomainError =>
  imageInvalid(ImageErrorCode.InvalidReference, `${label}: must be an HTTPS URL or Base64 image data (raw, or a data URL)`);

/** What raw Base64 may start with (a URL or a path does not): a character of its alphabet, no scheme. */
const BASE64_START = /^[A-Za-z0-9+/]{4}(?![A-Za-z0-9+.-]*:)/;

/** Raw Base64 (no scheme): the alphabet, with its padding at the end only. */
const BASE64_TEXT = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeBase64(payload: string, label: string): Buffer {
  if (payload.length > MAX_BASE64_CHARACTERS) {
    throw imageInvalid(ImageErrorCode.InvalidReference, `${label}: larger than ${IMAGE_MAX_REFERENCE_BYTES} bytes`);
  }
  const bytes = Buffer.from(payload, 'base64');
  // Buffer skips characters outside the alphabet: a decoded length short of the text's says it was not Base64.
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  if (payload.length === 0 || payload.length % 4 !== 0 || bytes.length !== (payload.length / 4) * 3 - padding) {
    throw imageInvalid(ImageErrorCode.InvalidReference, `${label}: not valid Base64`);
  }
  return bytes;
}

function locationOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`.slice(0, 512);
  } catch {
    return '';
  }
}
