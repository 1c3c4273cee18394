import { Injectable, Logger } from '@nestjs/common';
import { GuardedHttpClient, OutboundRequestError } from '../../../libs/common/index.js';
import { looksLikeMp4, mp4DurationSeconds, type PreparedAsset, sniffImage } from '../../../libs/providers/index.js';
import { VideoTaskRepository } from './video-task.repository.js';
import type { VideoRequestSnapshot } from './video-task.entity.js';
import { assetList } from './video-rules.js';

export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
export const MAX_VIDEO_BYTES = 64 * 1024 * 1024;
export const MAX_VIDEO_SECONDS = 10;
/** Decoding bound for WebP conversion (a 16k × 16k image): a tiny file cannot expand without limit. */
const MAX_IMAGE_PIXELS = 16_384 * 16_384;
/** Container rounding (an AAC priming frame) is not held against a 10-second clip. */
const DURATION_TOLERANCE_SECONDS = 0.05;
const FETCH_TIMEOUT_MS = 30_000;
/** Headers that say nothing about the type: the bytes decide alone. */
const UNTYPED = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** Media that cannot be used: the task fails with this message as its failureReason. */
export class InvalidMediaError extends Error {
  constructor(field: string, why: string) {
    super(`${field}: ${why}`);
    this.name = 'InvalidMediaError';
  }
}

/**
 * Rules 4–6: every asset is checked before anything is sent upstream. HTTPS media is fetched
 * through the guarded outbound client (DESIGN §7) with size caps; images must be JPEG, PNG or
 * WebP by their magic bytes (and a typed Content-Type must agree; WebP is converted to PNG),
 * videos MP4 of at most 10 s by their `mvhd` box. `gs://` objects must sit under a prefix
 * registered for the workspace, and images there must be JPEG or PNG (by extension: their bytes
 * are read by the upstream).
 */
@Injectable()
export class VideoMediaValidator {
  private readonly logger = new Logger(VideoMediaValidator.name);

  constructor(
    private readonly http: GuardedHttpClient,
    private readonly tasks: VideoTaskRepository,
  ) {}

  async prepare(workspaceId: string, snapshot: VideoRequestSnapshot): Promise<PreparedAsset[]> {
    const list = assetList(snapshot);
    if (list.length === 0) return [];
    const prefixes = list.some((a) => a.uri.startsWith('gs://')) ? await this.tasks.prefixesOf(workspaceId) : [];
    return Promise.all(
      list.map(async ({ role, field, uri }) => {
        const isVideo = role === 'sourceVideo' || role === 'referenceVideo';
        if (uri.startsWith('gs://')) return { role, uri, mimeType: checkGcs(field, uri, isVideo, prefixes) };
        return isVideo ? { role, uri, ...(await this.fetchVideo(field, uri)) } : { role, uri, ...(await this.fetchImage(field, uri)) };
      }),
    );
  }

  private async fetchImage(field: string, uri: string): Promise<{ mimeType: string; bytes: Buffer }> {
    const { body, contentType } = await this.fetch(field, uri, MAX_IMAGE_BYTES, '20 MiB');
    const type = sniffImage(body);
    if (!type) throw new InvalidMediaError(field, 'is not a JPEG, PNG or WebP image');
    const declared = contentType === 'image/jpg' ? 'image/jpeg' : contentType;
    if (!UNTYPED.has(declared) && declared !== type) {
      throw new InvalidMediaError(field, `is served as ${declared} but its bytes are ${type}`);
    }
    if (type !== 'image/webp') return { mimeType: type, bytes: body };
    // Rule 5: the upstream takes JPEG or PNG, so a WebP is sent as the PNG it converts to, and
    // that PNG must fit the same 20 MiB.
    // Loaded on first use: libvips adds ~20 MB to every process, and WebP inputs are rare.
    const { default: sharp } = await import('sharp');
    const png = await sharp(body, { limitInputPixels: MAX_IMAGE_PIXELS })
      .png()
      .toBuffer()
      .catch(() => {
        throw new InvalidMediaError(field, 'is a WebP image that could not be decoded');
      });
    if (png.length > MAX_IMAGE_BYTES) throw new InvalidMediaError(field, 'is a WebP image whose PNG conversion is larger than 20 MiB');
    return { mimeType: 'image/png', bytes: png };
  }

  private async fetchVideo(field: string, uri: string): Promise<{ mimeType: string; bytes: Buffer }> {
    const { body, contentType } = await this.fetch(field, uri, MAX_VIDEO_BYTES, '64 MiB');
    if (!looksLikeMp4(body)) throw new InvalidMediaError(field, 'is not an MP4 video');
    if (!UNTYPED.has(contentType) && contentType !== 'video/mp4') {
      throw new InvalidMediaError(field, `is served as ${contentType}, not video/mp4`);
    }
    const seconds = mp4DurationSeconds(body);
    if (seconds === null) throw new InvalidMediaError(field, 'is an MP4 without a readable duration');
    if (seconds > MAX_VIDEO_SECONDS + DURATION_TOLERANCE_SECONDS) {
      throw new InvalidMediaError(field, `is ${seconds.toFixed(2)} s long; input clips may be at most ${MAX_VIDEO_SECONDS} s`);
    }
    return { mimeType: 'video/mp4', bytes: body };
  }

  private async fetch(field: string, uri: string, maxBytes: number, capText: string): Promise<{ body: Buffer; contentType: string }> {
    try {
      const response = await this.http.request(uri, { method: 'GET', timeoutMs: FETCH_TIMEOUT_MS, maxBytes });
      if (response.status !== 200) throw new InvalidMediaError(field, `could not be fetched (HTTP ${response.status})`);
      const header = response.headers['content-type'] ?? '';
      return { body: response.body, contentType: header.split(';', 1)[0]!.trim().toLowerCase() };
    } catch (error) {
      if (error instanceof InvalidMediaError) throw error;
      if (error instanceof OutboundRequestError) {
        // The task's failureReason stays generic; what the name resolved to is for the log only.
        this.logger.warn({ msg: 'video media could not be fetched', field, reason: error.reason, detail: error.detail });
        throw new InvalidMediaError(field, outboundReason(error, capText));
      }
      throw error;
    }
  }
}

function outboundReason(error: OutboundRequestError, capText: string): string {
  switch (error.reason) {
    case 'too_large':
      return `is larger than ${capText}`;
    case 'timeout':
      return 'could not be fetched in time';
    case 'redirect_refused':
      return 'answered with a redirect (redirects are not followed; give the final URL)';
    case 'address_not_allowed':
      return 'points to an address that is not allowed';
    case 'scheme_not_allowed':
    case 'invalid_url':
      return 'is not an allowed https:// URL';
    case 'dns_failed':
      return 'has a host name that does not resolve';
    default:
      return 'could not be fetched (network error)';
  }
}

/** `gs://` objects: registered prefix, and a type we can tell from the name. */
function checkGcs(field: string, uri: string, isVideo: boolean, prefixes: string[]): string {
  const registered = prefixes.some((p) => uri === p || uri.startsWith(p.endsWith('/') ? p : `${p}/`));
  if (!registered) {
    throw new InvalidMediaError(field, 'is a gs:// object outside the prefixes registered for this workspace (registration is done through support)');
  }
  const name = uri.toLowerCase().split('?', 1)[0]!;
  if (isVideo) {
    if (!name.endsWith('.mp4')) throw new InvalidMediaError(field, 'must be an .mp4 object');
    return 'video/mp4';
  }
  if (name.endsWith('.jpg') || name.endsWith('.jpeg')) return 'image/jpeg';
  if (name.endsWith('.png')) return 'image/png';
  throw new InvalidMediaError(field, 'must be a JPEG or PNG object (.jpg, .jpeg, .png) for gs:// images');
}
