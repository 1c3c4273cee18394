import { Readable } from 'node:stream';

/** What a store call may hand over: bytes in memory, a stream (never buffered whole), or a file to copy. */
export type MediaBody = Buffer | Readable | { path: string };

/** True for a stream body (any readable with `pipe`, not only node:stream's own class). */
export function isStreamBody(body: MediaBody): body is Readable {
  return body instanceof Readable || typeof (body as { pipe?: unknown }).pipe === 'function';
}

/** A read could not be served from the version `open()` announced: the object was replaced or deleted meanwhile. */
export class MediaChangedWhileReadingError extends Error {
  constructor(key: string) {
    super(`media ${key} was replaced or deleted while it was being read`);
    this.name = 'MediaChangedWhileReadingError';
  }
}

export interface MediaStat {
  bytes: number;
  /** Opaque, changes whenever the object's bytes are replaced (used for a strong ETag). */
  version: string;
}

/** Inclusive byte offsets. */
export interface ByteSpan {
  start: number;
  end: number;
}

/**
 * An object opened for reading: size and version are those of the bytes `stream()` yields,
 * even when the key is replaced meanwhile — or, for a driver that cannot keep a replaced version
 * readable (an unversioned bucket), the stream fails with MediaChangedWhileReadingError: it never
 * mixes versions. Call `stream()` once or `close()`.
 */
export interface MediaReadHandle extends MediaStat {
  stream(span?: ByteSpan): Readable;
  close(): Promise<void>;
}

export interface DirectLinkOptions {
  expiresInSeconds: number;
  /** The Content-Type the link must answer with. */
  contentType: string;
}

/** A write whose bytes are durable but not yet visible under the key. Callers `discard()` it in a `finally`. */
export interface StagedMediaWrite {
  readonly bytes: number;
  /** Makes the bytes visible under the key in one atomic step (replacing what was there). */
  commit(): Promise<void>;
  /** Drops the staged bytes (safe after commit or twice). */
  discard(): Promise<void>;
}

/**
 * Where media bytes live. Keys are validated by the driver (`assertValidMediaKey`). Readers never
 * see a partial object: a write is staged, made durable, then published atomically.
 */
export abstract class MediaStorage {
  /** Writes the bytes durably beside the key without publishing them. */
  abstract stage(key: string, body: MediaBody): Promise<StagedMediaWrite>;

  /** Stages and publishes in one call. */
  async write(key: string, body: MediaBody): Promise<{ bytes: number }> {
    const staged = await this.stage(key, body);
    try {
      await staged.commit();
    } finally {
      await staged.discard();
    }
    return { bytes: staged.bytes };
  }

  /** Opens the object, or null when there is none. */
  abstract open(key: string): Promise<MediaReadHandle | null>;

  abstract stat(key: string): Promise<MediaStat | null>;

  /** Removes the object; true when there was one. Missing objects are not an error. */
  abstract delete(key: string): Promise<boolean>;

  /**
   * Removes staged writes abandoned by a crash, untouched for `olderThanMs`; returns how many.
   * Ages are measured against the storage's own clock (file times are wall-clock), not the
   * injectable Clock: a test moving the Clock must not make a write in flight look abandoned.
   */
  abstract cleanupStaged(olderThanMs: number): Promise<number>;

  /**
   * A link clients fetch the bytes from directly (a presigned store URL), valid `expiresInSeconds`,
   * or null when the service serves the bytes itself through its signed `/media` links (the default).
   */
  directLink(_key: string, _options: DirectLinkOptions): Promise<string | null> {
    return Promise.resolve(null);
  }
}
