import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  paginateListObjectsV2,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { assertValidMediaKey } from './media-key.js';
import {
  type ByteSpan,
  type DirectLinkOptions,
  isStreamBody,
  type MediaBody,
  MediaChangedWhileReadingError,
  type MediaReadHandle,
  type MediaStat,
  MediaStorage,
  type StagedMediaWrite,
} from './media-storage.js';

export interface S3MediaStorageOptions {
  bucket: string;
  region: string;
  /** S3-compatible server (MinIO, …); unset: AWS itself. */
  endpoint?: string;
  /** `<endpoint>/<bucket>/<key>` URLs instead of `<bucket>.<endpoint>` (most S3-compatible servers need it). */
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default credential chain (instance or task role, shared config). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Prepended to every object key, e.g. `svc/` so several deployments share one bucket. */
  keyPrefix: string;
  /** Video and audio links are presigned GET URLs of the store instead of the service's own `/media` links. */
  presignedLinks: boolean;
  /** Endpoint clients reach for presigned links when it differs from `endpoint` (a store inside a private network). */
  publicEndpoint?: string;
  /** Part size of multipart uploads (S3's minimum is 5 MiB); bodies up to one part are one PUT. */
  partSizeBytes?: number;
}

/** Staged writes live under this prefix; no media key can start with it (no segment starts with a dot). */
const STAGING_PREFIX = '.staging/';
const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
const STORE_SOCKETS = 1024;

const statusOf = (error: unknown): number | undefined => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
/** S3 sends ETags quoted; ours are quoted by the media route. */
const unquote = (etag: string | undefined): string => (etag ?? '').replace(/^"|"$/g, '');

/**
 * Media in an S3 bucket (AWS or S3-compatible), one object per key at `<keyPrefix><key>`, so
 * several API and worker hosts share one store.
 *
 * - `stage()` uploads to `<keyPrefix>.staging/<uuid>` (multipart beyond one part): durable, invisible.
 * - `commit()` copies the staged object onto the key (CopyObject publishes a whole object or nothing)
 *   and deletes the staged one; copies are limited to 5 GiB by S3.
 * - `open()` reads size and ETag (HEAD); `stream()` GETs with `If-Match` (and the VersionId on a
 *   versioned bucket) and checks the answer, so the bytes are those announced. On an unversioned
 *   bucket a replacement between the two calls makes the stream fail rather than mix versions.
 */
export class S3MediaStorage extends MediaStorage implements OnModuleDestroy {
  private readonly client: S3Client;
  private readonly presigner: S3Client;
  private readonly partSize: number;

  constructor(private readonly options: S3MediaStorageOptions) {
    super();
    const clientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Checksums only where S3 requires them: S3-compatible servers do not all accept the
      // streaming checksum trailers the SDK adds by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Each download served through the service holds a socket for its whole length: the SDK's
      // default of 50 sockets would queue the 51st viewer. No idle timeout on the socket either:
      // a paused player legitimately stops reading for minutes.
      requestHandler: { connectionTimeout: 5_000, httpAgent: { keepAlive: true, maxSockets: STORE_SOCKETS }, httpsAgent: { keepAlive: true, maxSockets: STORE_SOCKETS } },
    } as const;
    this.client = new S3Client({ ...clientConfig, endpoint: options.endpoint });
    // Presigning makes no request: a second client only to name the public endpoint in links.
    this.presigner = options.publicEndpoint ? new S3Client({ ...clientConfig, endpoint: options.publicEndpoint }) : this.client;
    this.partSize = options.partSizeBytes ?? DEFAULT_PART_SIZE;
  }

  onModuleDestroy(): void {
    this.client.destroy();
    if (this.presigner !== this.client) this.presigner.destroy();
  }

  private objectKey(key: string): string {
    assertValidMediaKey(key);
    return `${this.options.keyPrefix}${key}`;
  }

  async stage(key: string, body: MediaBody): Promise<StagedMediaWrite> {
    const target = this.objectKey(key);
    const staged = `${this.options.keyPrefix}${STAGING_PREFIX}${randomUUID()}`;
    let bytes = 0;
    let payload: Buffer | Readable;
    if (Buffer.isBuffer(body)) {
      bytes = body.length;
      payload = body;
    } else {
      const source = isStreamBody(body) ? body : createReadStream(body.path);
      // Counted as it streams: the body is uploaded part by part, never held whole.
      payload = Readable.from(
        (async function* () {
          for await (const chunk of source) {
            bytes += (chunk as Buffer).length;
            yield chunk as Buffer;
          }
        })(),
        { objectMode: false },
      );
    }
    // A failed upload aborts its multipart upload (leavePartsOnError is false): nothing stays behind.
    await new Upload({ client: this.client, params: { Bucket: this.options.bucket, Key: staged, Body: payload }, partSize: this.partSize, queueSize: 2 }).done();

    let stagedGone = false;
    const dropStaged = async () => {
      if (stagedGone) return;
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: staged }));
      stagedGone = true;
    };
    return {
      bytes,
      commit: async () => {
        await this.client.send(new CopyObjectCommand({ Bucket: this.options.bucket, Key: target, CopySource: encodeURI(`${this.options.bucket}/${staged}`) }));
        // Published: a failed clean-up must not undo that; discard() or cleanupStaged() retries it.
        await dropStaged().catch(() => undefined);
      },
      discard: dropStaged,
    };
  }

  private async head(objectKey: string): Promise<{ bytes: number; etag: string; versionId?: string } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: objectKey }));
      return { bytes: head.ContentLength ?? 0, etag: unquote(head.ETag), versionId: head.VersionId };
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  }

  async open(key: string): Promise<MediaReadHandle | null> {
    const objectKey = this.objectKey(key);
    const found = await this.head(objectKey);
    if (!found) return null;
    let used = false;
    return {
      bytes: found.bytes,
      version: found.etag,
      stream: (span?: ByteSpan) => {
        if (used) throw new Error('media read handle already used');
        used = true;
        return Readable.from(this.readVersion(key, objectKey, found, span), { objectMode: false });
      },
      // Nothing is held open until stream(): the GET is made there.
      close: () => {
        used = true;
        return Promise.resolve();
      },
    };
  }

  /** The bytes of exactly the version HEAD saw, or an error: a server that ignores If-Match is caught by the checks. */
  private async *readVersion(key: string, objectKey: string, found: { bytes: number; etag: string; versionId?: string }, span?: ByteSpan): AsyncGenerator<Buffer> {
    let answer;
    try {
      answer = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: objectKey,
          VersionId: found.versionId,
          IfMatch: `"${found.etag}"`,
          Range: span ? `bytes=${span.start}-${span.end}` : undefined,
        }),
      );
    } catch (error) {
      if ([404, 412].includes(statusOf(error) ?? 0)) throw new MediaChangedWhileReadingError(key);
      throw error;
    }
    const body = answer.Body as Readable;
    const expectedLength = span ? span.end - span.start + 1 : found.bytes;
    if (unquote(answer.ETag) !== found.etag || answer.ContentLength !== expectedLength) {
      body.destroy();
      throw new MediaChangedWhileReadingError(key);
    }
    yield* body;
  }

  async stat(key: string): Promise<MediaStat | null> {
    const found = await this.head(this.objectKey(key));
    return found && { bytes: found.bytes, version: found.etag };
  }

  async delete(key: string): Promise<boolean> {
    const objectKey = this.objectKey(key);
    const existed = (await this.head(objectKey)) !== null;
    // DeleteObject of a missing key succeeds: deleting twice is not an error.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: objectKey }));
    return existed;
  }

  async cleanupStaged(olderThanMs: number): Promise<number> {
    // LastModified is the store's clock; compared with the wall clock (see MediaStorage).
    const cutoff = Date.now() - olderThanMs;
    const prefix = `${this.options.keyPrefix}${STAGING_PREFIX}`;
    let removed = 0;
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.options.bucket, Prefix: prefix })) {
      for (const object of page.Contents ?? []) {
        if (!object.Key || !object.LastModified || object.LastModified.getTime() >= cutoff) continue;
        await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: object.Key }));
        removed++;
      }
    }
    return removed + (await this.abortStaleUploads(prefix, cutoff));
  }

  /** Multipart uploads a crash left open hold storage until aborted. */
  private async abortStaleUploads(prefix: string, cutoff: number): Promise<number> {
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.options.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }));
      } catch (error) {
        // Some S3-compatible servers cannot list uploads (501); a bucket lifecycle rule does this job there.
        if (statusOf(error) === 501) return aborted;
        throw error;
      }
      for (const upload of page.Uploads ?? []) {
        if (!upload.Key || !upload.UploadId || !upload.Initiated || upload.Initiated.getTime() >= cutoff) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key: upload.Key, UploadId: upload.UploadId }));
        aborted++;
      }
      ({ NextKeyMarker: keyMarker, NextUploadIdMarker: uploadIdMarker } = page);
      if (!page.IsTruncated) break;
    } while (keyMarker !== undefined);
    return aborted;
  }

  override async directLink(key: string, { expiresInSeconds, contentType }: DirectLinkOptions): Promise<string | null> {
    if (!this.options.presignedLinks) return null;
    const command = new GetObjectCommand({ Bucket: this.options.bucket, Key: this.objectKey(key), ResponseContentType: contentType });
    return getSignedUrl(this.presigner, command, { expiresIn: expiresInSeconds });
  }
}
