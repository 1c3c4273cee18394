import { Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { MediaNotFoundError } from './media-errors.js';
import { assertValidMediaKey } from './media-key.js';
import { MediaLinkSigner } from './media-link-signer.js';
import { MediaObjectRepository } from './media-object.repository.js';
import { MediaStorage } from './media-storage.js';

/**
 * CONTRACT of media storage (implemented by the media work; video, audio and image code
 * against it). Rows of other modules store media keys, never URLs; links are minted on each read.
 */
export interface StoreMediaInput {
  /**
   * Storage key, e.g. `video/<workspaceId>/<taskId>.mp4`. Storing the same key again replaces it (idempotent retries).
   * Segments of `A-Z a-z 0-9 . _ : -` joined by `/`, no segment starting with `.`, not starting with `public/`,
   * at most 512 characters; anything else throws (a programming error).
   */
  key: string;
  body: Buffer | Readable | { path: string };
  /** Served as the Content-Type of every link, e.g. `video/mp4`. */
  contentType: string;
  workspaceId?: string | null;
  /** Retention deadline: the sweeper deletes the file after it. Null or absent keeps it. */
  expiresAt?: Date | null;
  /** Also give the object an unguessable public link (images), valid until `expiresAt` (which is then required). */
  publicLink?: boolean;
}

export interface StoredMedia {
  key: string;
  contentType: string;
  bytes: number;
}

export interface MediaLink {
  url: string;
  expiresAt: Date;
}

/** Default and longest lifetime of a signed link (DESIGN §6: video and audio links ≤ 1 h). */
export const MAX_SIGNED_LINK_TTL_SECONDS = 3600;
/** Staged writes untouched this long were abandoned by a crash; the sweeper removes them. */
const ABANDONED_STAGING_MS = 6 * 3600_000;
const SWEEP_BATCH = 200;
/** `type/subtype` with optional parameters; no control characters (it becomes a header). */
const CONTENT_TYPE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+\/[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*;[\x20-\x7e]*)?$/;

@Injectable()
export class MediaService {
  private readonly logger = new Logger(MediaService.name);

  constructor(
    private readonly storage: MediaStorage,
    private readonly objects: MediaObjectRepository,
    private readonly signer: MediaLinkSigner,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /** Writes the object and its row; resolves once the bytes are durable in the store. */
  async store(input: StoreMediaInput): Promise<StoredMedia> {
    assertValidMediaKey(input.key);
    if (!CONTENT_TYPE.test(input.contentType)) throw new Error(`invalid media content type ${JSON.stringify(input.contentType)}`);
    const expiresAt = input.expiresAt ?? null;
    if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new Error('media expiresAt is an invalid date');
    if (input.publicLink && !expiresAt) throw new Error('a media object with a public link needs expiresAt (public links must end)');

    // The slow part (receiving the bytes) happens outside the lock; publishing is one step (a rename on disk, a copy on S3).
    const staged = await this.storage.stage(input.key, input.body);
    try {
      await this.objects.withKeyLock(input.key, async (tx) => {
        await this.objects.upsert(
          {
            key: input.key,
            workspaceId: input.workspaceId ?? null,
            contentType: input.contentType,
            bytes: staged.bytes,
            expiresAt,
            newPublicToken: input.publicLink ? randomBytes(32).toString('base64url') : null,
            now: this.clock.now(),
          },
          tx,
        );
        // Published last, inside the transaction: if publishing fails the row change rolls back.
        await staged.commit();
      });
    } finally {
      await staged.discard();
    }
    return { key: input.key, contentType: input.contentType, bytes: staged.bytes };
  }

  /**
   * HMAC-signed link served by this service (or the driver's presigned link when it is configured
   * for them); valid `ttlSeconds` (default and max 3600), never past the object's expiry.
   * Throws MediaNotFoundError when the object is missing, deleted or expired.
   */
  async signedLink(key: string, ttlSeconds: number = MAX_SIGNED_LINK_TTL_SECONDS): Promise<MediaLink> {
    assertValidMediaKey(key);
    if (!Number.isFinite(ttlSeconds) || ttlSeconds < 1) throw new RangeError(`signed link ttl must be at least 1 second, got ${ttlSeconds}`);
    const ttl = Math.min(Math.floor(ttlSeconds), MAX_SIGNED_LINK_TTL_SECONDS);
    const now = this.clock.now();
    const row = await this.objects.findLive(key, now);
    if (!row) throw new MediaNotFoundError(`media ${key}`);
    const nowSeconds = Math.floor(now.getTime() / 1000);
    let exp = nowSeconds + ttl;
    if (row.expiresAt) exp = Math.min(exp, Math.floor(row.expiresAt.getTime() / 1000));
    // A driver configured for it (S3 presigned links) serves the bytes itself, for the same lifetime.
    const direct = exp > nowSeconds ? await this.storage.directLink(key, { expiresInSeconds: exp - nowSeconds, contentType: row.contentType }) : null;
    if (direct) return { url: direct, expiresAt: new Date(exp * 1000) };
    const query = new URLSearchParams({ exp: String(exp), sig: this.signer.sign(key, exp) });
    return { url: `${this.config.publicBaseUrl}/media/${key}?${query.toString()}`, expiresAt: new Date(exp * 1000) };
  }

  /** The public unguessable link of an object stored with `publicLink`. Throws MediaNotFoundError when it is gone. */
  async publicLink(key: string): Promise<MediaLink> {
    assertValidMediaKey(key);
    const row = await this.objects.findLive(key, this.clock.now());
    if (!row) throw new MediaNotFoundError(`media ${key}`);
    if (!row.publicToken || !row.expiresAt) throw new Error(`media ${key} was stored without publicLink`);
    return { url: `${this.config.publicBaseUrl}/media/public/${row.publicToken}`, expiresAt: row.expiresAt };
  }

  /** True when the object exists and has not expired or been deleted. */
  async exists(key: string): Promise<boolean> {
    assertValidMediaKey(key);
    const row = await this.objects.findLive(key, this.clock.now());
    return row !== null && (await this.storage.stat(key)) !== null;
  }

  /** Deletes the file and marks the row deleted (idempotent). */
  async delete(key: string): Promise<void> {
    assertValidMediaKey(key);
    await this.objects.withKeyLock(key, async (tx) => {
      await this.storage.delete(key);
      await this.objects.markDeleted(key, this.clock.now(), tx);
    });
  }

  /**
   * Runs `use` on a temporary local copy of the object, for tools that need a file path (ffmpeg),
   * whatever the driver; the copy is removed once `use` settles. Throws MediaNotFoundError when
   * there is no such object.
   */
  async withLocalFile<T>(key: string, use: (path: string) => Promise<T>): Promise<T> {
    assertValidMediaKey(key);
    const handle = await this.storage.open(key);
    if (!handle) throw new MediaNotFoundError(`media ${key}`);
    const folder = await mkdtemp(join(tmpdir(), 'svc-media-copy-'));
    try {
      const path = join(folder, basename(key));
      await pipeline(handle.stream(), createWriteStream(path, { flags: 'wx' }));
      return await use(path);
    } finally {
      await handle.close();
      await rm(folder, { recursive: true, force: true });
    }
  }

  /**
   * Retention: deletes every object whose `expiresAt` has passed (file, then row marked deleted)
   * and returns how many it removed. Safe to run concurrently with itself and with stores.
   */
  async sweepExpired(): Promise<number> {
    const now = this.clock.now();
    let removed = 0;
    let after = '';
    for (;;) {
      const keys = await this.objects.findExpiredKeys(now, SWEEP_BATCH, after);
      for (const key of keys) {
        try {
          if (await this.removeExpired(key, now)) removed++;
        } catch (error) {
          // One bad object must not stop retention of the others; it is retried next sweep.
          this.logger.error({ msg: 'could not delete expired media', key, err: error });
        }
      }
      if (keys.length < SWEEP_BATCH) break;
      after = keys[keys.length - 1]!;
    }
    try {
      const abandoned = await this.storage.cleanupStaged(ABANDONED_STAGING_MS);
      if (abandoned) this.logger.warn(`removed ${abandoned} abandoned staged media writes`);
    } catch (error) {
      this.logger.error({ msg: 'could not clean staged media writes', err: error });
    }
    if (removed) this.logger.log(`media retention removed ${removed} expired objects`);
    return removed;
  }

  private removeExpired(key: string, now: Date): Promise<boolean> {
    return this.objects.withKeyLock(key, async (tx) => {
      // Re-read under the lock: a store may have replaced the object with a later expiry.
      const row = await this.objects.findUndeletedForUpdate(key, tx);
      if (!row?.expiresAt || row.expiresAt > now) return false;
      await this.storage.delete(key);
      await this.objects.markDeleted(key, now, tx);
      return true;
    });
  }
}
