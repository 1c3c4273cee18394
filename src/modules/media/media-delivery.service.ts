import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Clock, DomainError } from '../../../libs/common/index.js';
import { decideRange } from './byte-range.js';
import { MediaErrorCode, MediaNotFoundError } from './media-errors.js';
import { isValidMediaKey } from './media-key.js';
import { MediaLinkSigner } from './media-link-signer.js';
import { MediaObjectRepository } from './media-object.repository.js';
import { type MediaReadHandle, MediaStorage } from './media-storage.js';

const PUBLIC_TOKEN = /^[A-Za-z0-9_-]{43}$/;

interface Deliverable {
  contentType: string;
  handle: MediaReadHandle;
  cacheControl: string;
}

/** `If-None-Match` against our ETag (weak comparison, RFC 9110 §13.1.2). */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

const headerOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Answers the media routes: checks the link, finds a live object, and serves its bytes with
 * HEAD, single-range and conditional-request support. The bytes are streamed from one read
 * handle, so the length announced is the length sent even if the key is replaced meanwhile.
 */
@Injectable()
export class MediaDelivery {
  constructor(
    private readonly storage: MediaStorage,
    private readonly objects: MediaObjectRepository,
    private readonly signer: MediaLinkSigner,
    private readonly clock: Clock,
  ) {}

  /** `/media/<key>?exp=&sig=`: the key is the route's wildcard (slashes included). */
  async serveSigned(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = (request.params as Record<string, string | undefined>)['*'] ?? '';
    const query = request.query as Record<string, unknown>;
    await this.send(request, reply, await this.openSigned(key, query.exp, query.sig));
  }

  async servePublic(token: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.send(request, reply, await this.openPublic(token));
  }

  private async openSigned(key: string, exp: unknown, sig: unknown): Promise<Deliverable> {
    const now = this.clock.now();
    // A key no store could have written has no valid signature either; it never reaches the disk.
    const verdict = isValidMediaKey(key) ? this.signer.verify(key, exp, sig, now) : 'invalid';
    if (verdict === 'invalid') throw new DomainError(403, MediaErrorCode.InvalidSignature, 'the link signature is missing or does not match');
    if (verdict === 'expired') throw new DomainError(403, MediaErrorCode.LinkExpired, 'the link has expired; fetch the resource again for a fresh link');
    const row = await this.objects.findLive(key, now);
    const handle = row && (await this.storage.open(key));
    if (!row || !handle) throw new MediaNotFoundError();
    // Caches may keep the answer until the link ends, never longer; private: the URL is a credential.
    const maxAge = Math.max(0, Number(exp) - Math.ceil(now.getTime() / 1000));
    return { contentType: row.contentType, handle, cacheControl: `private, max-age=${maxAge}` };
  }

  /**
   * Public links answer 404 once the object's retention ends (or it is deleted), not 403: the
   * token names the object rather than carrying an expiry, and the answer stays the same before
   * and after the sweeper has run.
   */
  private async openPublic(token: string): Promise<Deliverable> {
    const now = this.clock.now();
    const row = PUBLIC_TOKEN.test(token) ? await this.objects.findLiveByPublicToken(token, now) : null;
    const handle = row && (await this.storage.open(row.key));
    if (!row || !handle) throw new MediaNotFoundError();
    const maxAge = row.expiresAt ? Math.max(0, Math.floor((row.expiresAt.getTime() - now.getTime()) / 1000)) : 0;
    return { contentType: row.contentType, handle, cacheControl: `public, max-age=${maxAge}` };
  }

  private async send(request: FastifyRequest, reply: FastifyReply, { contentType, handle, cacheControl }: Deliverable): Promise<void> {
    try {
      const size = handle.bytes;
      const etag = `"${handle.version}"`;
      const common = { etag, 'cache-control': cacheControl, 'accept-ranges': 'bytes' };
      if (noneMatch(headerOf(request, 'if-none-match'), etag)) {
        await handle.close();
        void reply.status(304).headers(common).send();
        return;
      }
      let range = decideRange(headerOf(request, 'range'), size);
      // If-Range: the range only applies to the version the client already holds part of.
      const ifRange = headerOf(request, 'if-range');
      if (range.kind !== 'full' && ifRange !== undefined && ifRange.trim() !== etag) range = { kind: 'full' };
      if (range.kind === 'unsatisfiable') {
        throw new DomainError(416, MediaErrorCode.RangeNotSatisfiable, `the range is outside the ${size} bytes of the object`, {
          'content-range': `bytes */${size}`,
          'accept-ranges': 'bytes',
        });
      }
      const span = range.kind === 'partial' ? { start: range.start, end: range.end } : undefined;
      void reply.status(span ? 206 : 200).headers({
        ...common,
        'content-type': contentType,
        'content-length': String(span ? span.end - span.start + 1 : size),
        'x-content-type-options': 'nosniff',
        ...(span ? { 'content-range': `bytes ${span.start}-${span.end}/${size}` } : {}),
      });
      if (request.method === 'HEAD') {
        await handle.close();
        void reply.send();
        return;
      }
      // Not awaited: the stream owns the handle from here and releases it however the response ends.
      void reply.send(handle.stream(span));
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
}
