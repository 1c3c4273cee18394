/**
 * The one client for outbound HTTP to user-supplied URLs (DESIGN §7): media validation and
 * webhook delivery. https only (config may allow http), every resolved address checked (only
 * public unicast passes, unless private addresses are allowed for local development and tests),
 * the connection pinned to the checked address, no redirects, byte caps and timeouts.
 *
 * How one request goes:
 * 1. the URL is parsed (WHATWG: `http://2130706433/` is `127.0.0.1`): http(s) only, plain http
 *    only with `allowHttp`, no user info;
 * 2. the host is resolved (`dns.lookup`, all addresses) unless it is an IP literal, and EVERY
 *    address is checked (ipaddr.js after unwrapping IPv4-mapped IPv6; only `unicast` passes
 *    unless `allowPrivate`); one refused address refuses the URL (a name that resolves to a
 *    public and a private address is a rebinding attempt or a misconfiguration);
 * 3. the port must be 80 or 443 (`allowedPorts`) unless `allowPrivate` (local servers use
 *    random ports); checked after the address so a loopback URL reports the address;
 * 4. the request goes through a small undici Pool bound to (origin, checked address) whose
 *    connector dials that address (SNI, certificate check and Host stay the URL's host) and
 *    re-checks the socket's peer address before anything is written; addresses are tried
 *    IPv4 first, the next one only when connecting failed (refused/unreachable/connect
 *    timeout), so nothing was sent and even a POST is safe to retry;
 * 5. a 3xx comes back as it is, never followed (callers treat it as a failure and may throw
 *    'redirect_refused'); the whole exchange (DNS, connect, headers, body) is bounded by
 *    `timeoutMs` and the body by `maxBytes` (a Content-Length above it is refused before any
 *    body byte is read; a chunked body is aborted at the first byte past it).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isIPv4 } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher, Pool } from 'undici';
import { addressRefusal, canonicalAddress, DEFAULT_ALLOWED_PORTS, parseOutboundUrl, type OutboundTarget } from './address-policy.js';
import { OutboundRequestError } from './outbound-request.error.js';
import { pinnedConnector } from './pinned-connector.js';
import { undici } from './undici-module.js';

export { OutboundRequestError, type OutboundFailureReason } from './outbound-request.error.js';

/** Resolves a host name to every address it has (tests inject one: DNS is not theirs to set). */
export type HostLookup = (hostname: string) => Promise<ReadonlyArray<{ address: string }>>;

export interface GuardedHttpOptions {
  /** Allow plain http:// (local development and tests only). */
  allowHttp: boolean;
  /** Allow loopback/private/link-local addresses and any port (local development and tests only). */
  allowPrivate: boolean;
  /** Ports allowed while `allowPrivate` is false; default 80 and 443. */
  allowedPorts?: readonly number[];
  /** Host name resolver; default `dns.lookup` with `all: true`. */
  lookup?: HostLookup;
  /** Pools kept for reuse, one per (origin, pinned address), least recently used closed first; default 32. */
  maxPools?: number;
  /** Extra trusted certificate authorities (tests); the system store otherwise. */
  ca?: string | Buffer | Array<string | Buffer>;
}

export interface GuardedRequest {
  method?: 'GET' | 'HEAD' | 'POST';
  /** Request headers; a `host` header is ignored (Host is always the URL's host). */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole-exchange timeout; default 15 s. */
  timeoutMs?: number;
  /** The body is refused (OutboundRequestError 'too_large') past this many bytes; default 64 MiB. */
  maxBytes?: number;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The address the connection was made to (after the checks). */
  remoteAddress: string;
}

/** A response whose body is read as a stream (large media); see `requestStream`. */
export interface GuardedStreamResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The body, capped at `maxBytes` and bounded by the same whole-exchange timeout: it fails
   * with OutboundRequestError ('too_large', 'timeout', 'network'). Consume or destroy it.
   */
  body: Readable;
  remoteAddress: string;
}

export interface GuardedDownload {
  status: number;
  headers: Record<string, string>;
  /** Bytes written to the file. */
  bytes: number;
  remoteAddress: string;
}

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 15_000;
export const DEFAULT_OUTBOUND_MAX_BYTES = 64 * 1024 * 1024;
/** TCP + TLS handshake limit per address, so a second address still fits in the deadline. */
const CONNECT_TIMEOUT_MS = 5_000;
const MAX_ADDRESSES_TRIED = 3;
const DEFAULT_MAX_POOLS = 32;
/** Headers the caller may not set: Host is the URL's host; framing is undici's. */
const REFUSED_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

const defaultLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export class GuardedHttpClient {
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  constructor(readonly options: GuardedHttpOptions) {}

  /** Sends one request; a 3xx is returned as it is (never followed). Throws OutboundRequestError. */
  async request(url: string, request: GuardedRequest = {}): Promise<GuardedResponse> {
    const exchange = await this.open(url, request);
    try {
      const body = await readCapped(exchange.response.body, exchange.maxBytes);
      return { status: exchange.status, headers: exchange.headers, body, remoteAddress: exchange.remoteAddress };
    } catch (err) {
      throw toOutboundError(err, exchange.deadline);
    } finally {
      exchange.deadline.clear();
    }
  }

  /**
   * Like `request`, but the body is handed over as a stream (a video can be 64 MiB): same
   * checks, same cap and whole-exchange timeout, enforced while the stream is read.
   */
  async requestStream(url: string, request: GuardedRequest = {}): Promise<GuardedStreamResponse> {
    const exchange = await this.open(url, request);
    const { response, deadline, maxBytes } = exchange;
    async function* capped(): AsyncGenerator<Buffer> {
      let total = 0;
      try {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          total += chunk.length;
          if (total > maxBytes) throw tooLarge(maxBytes);
          yield chunk;
        }
      } catch (err) {
        throw toOutboundError(err, deadline);
      } finally {
        deadline.clear();
        discard(response.body);
      }
    }
    const body = Readable.from(capped(), { objectMode: false });
    // Destroyed before it was read: the generator never ran, so release the connection here.
    body.once('close', () => {
      deadline.clear();
      discard(response.body);
    });
    return { status: exchange.status, headers: exchange.headers, body, remoteAddress: exchange.remoteAddress };
  }

  /**
   * Streams the body (whatever the status) into `filePath`; on failure the partial file is
   * removed. Outbound failures throw OutboundRequestError; file-system errors pass through.
   */
  async download(url: string, filePath: string, request: GuardedRequest = {}): Promise<GuardedDownload> {
    const response = await this.requestStream(url, request);
    const file = createWriteStream(filePath);
    try {
      await pipeline(response.body, file);
    } catch (err) {
      await rm(filePath, { force: true });
      throw err;
    }
    return { status: response.status, headers: response.headers, bytes: file.bytesWritten, remoteAddress: response.remoteAddress };
  }

  /** Closes every pooled connection; later requests fail with 'network'. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.close().catch(() => undefined)));
  }

  /** Nest lifecycle hook (the client is provided by a factory in ProvidersModule). */
  async onModuleDestroy(): Promise<void> {
    await this.close();
  }

  /** Checks, connects and reads the response head; the caller owns the body and the deadline. */
  private async open(url: string, request: GuardedRequest): Promise<OpenExchange> {
    if (this.closed) throw new OutboundRequestError('network', 'the outbound client is closed');
    const timeoutMs = positive(request.timeoutMs, DEFAULT_OUTBOUND_TIMEOUT_MS, 'timeoutMs');
    const maxBytes = positive(request.maxBytes, DEFAULT_OUTBOUND_MAX_BYTES, 'maxBytes');
    const method = request.method ?? 'GET';
    const target = parseOutboundUrl(url, this.options.allowHttp);
    const deadline = new Deadline(timeoutMs);
    try {
      const candidates = await deadline.race(this.checkedAddresses(target));
      const headersOut = outgoingHeaders(request.headers);
      let address = candidates[0];
      let response: Dispatcher.ResponseData | undefined;
      for (let i = 0; response === undefined; i++) {
        address = candidates[i];
        try {
          response = await this.poolFor(target, address).request({
            path: target.path,
            method,
            headers: headersOut,
            body: request.body,
            signal: deadline.signal,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          });
        } catch (err) {
          // Nothing was sent when the connection itself failed: try the next checked address.
          if (i + 1 >= candidates.length || deadline.timedOut || !isConnectFailure(err)) throw err;
        }
      }
      const headers = flattenHeaders(response.headers);
      const announced = Number(headers['content-length']);
      if (method !== 'HEAD' && Number.isFinite(announced) && announced > maxBytes) {
        discard(response.body);
        throw tooLarge(maxBytes, announced);
      }
      return { status: response.statusCode, headers, response, remoteAddress: address, deadline, maxBytes };
    } catch (err) {
      deadline.clear();
      throw toOutboundError(err, deadline);
    }
  }

  /**
   * Resolves and checks every address of the target; returns the ones to try, in order (IPv4
   * first, since containers often lack an IPv6 route; at most MAX_ADDRESSES_TRIED).
   */
  private async checkedAddresses(target: OutboundTarget): Promise<string[]> {
    const { allowPrivate } = this.options;
    let addresses: string[];
    if (target.literal !== undefined) {
      addresses = [target.literal];
    } else {
      let found: ReadonlyArray<{ address: string }>;
      try {
        found = await (this.options.lookup ?? defaultLookup)(target.hostname);
      } catch (err) {
        throw new OutboundRequestError('dns_failed', `cannot resolve ${target.hostname}`, `cannot resolve ${target.hostname}: ${(err as Error).message}`);
      }
      if (found.length === 0) throw new OutboundRequestError('dns_failed', `${target.hostname} has no address`);
      addresses = found.map((entry) => canonicalAddress(entry.address) ?? entry.address);
    }
    for (const address of addresses) {
      const refusal = addressRefusal(address, allowPrivate);
      if (refusal !== null) throw new OutboundRequestError('address_not_allowed', `the address of ${target.hostname} is not allowed`, `${target.hostname}: ${refusal}`);
    }
    if (!allowPrivate && !(this.options.allowedPorts ?? DEFAULT_ALLOWED_PORTS).includes(target.port)) {
      throw new OutboundRequestError('address_not_allowed', `port ${target.port} is not allowed`);
    }
    const unique = [...new Set(addresses)];
    const ipv4 = unique.filter((address) => isIPv4(address));
    const ipv6 = unique.filter((address) => !isIPv4(address));
    return [...ipv4, ...ipv6].slice(0, MAX_ADDRESSES_TRIED);
  }

  /** A pool per (origin, pinned address): kept connections only ever reach a checked address. */
  private poolFor(target: OutboundTarget, address: string): Pool {
    if (this.closed) throw new OutboundRequestError('network', 'the outbound client is closed');
    const key = `${target.origin} ${address}`;
    const existing = this.pools.get(key);
    if (existing !== undefined) {
      this.pools.delete(key);
      this.pools.set(key, existing);
      return existing;
    }
    const pool = new (undici().Pool)(target.origin, {
      connections: 8,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 30_000,
      connect: pinnedConnector({
        address,
        allowPrivate: this.options.allowPrivate,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        ca: this.options.ca,
      }),
    });
    this.pools.set(key, pool);
    const maxPools = Math.max(1, this.options.maxPools ?? DEFAULT_MAX_POOLS);
    for (const [oldKey, old] of this.pools) {
      if (this.pools.size <= maxPools) break;
      this.pools.delete(oldKey);
      // close() lets requests in flight finish.
      void old.close().catch(() => undefined);
    }
    return pool;
  }
}

interface OpenExchange {
  status: number;
  headers: Record<string, string>;
  response: Dispatcher.ResponseData;
  remoteAddress: string;
  deadline: Deadline;
  maxBytes: number;
}

/** One timer for the whole exchange: DNS, connect, response head and body. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;

  constructor(readonly timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new OutboundRequestError('timeout', `no complete response within ${timeoutMs} ms`));
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Settles with the promise, or rejects with 'timeout' when the deadline passes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err as Error);
        },
      );
    });
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

async function readCapped(body: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    // Leaving the loop by throwing destroys the stream, which aborts the connection.
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** Drops a body not (or no longer) wanted, which aborts its connection if still streaming. */
function discard(body: Readable): void {
  if (body.destroyed) return;
  // undici's body errors with AbortError when destroyed unfinished; nobody listens any more.
  body.on('error', () => undefined);
  body.destroy();
}

function tooLarge(maxBytes: number, announced?: number): OutboundRequestError {
  const what = announced === undefined ? 'the body' : `the announced body (${announced} bytes)`;
  return new OutboundRequestError('too_large', `${what} exceeds ${maxBytes} bytes`);
}

/** Errors of the connection attempt itself, before any request byte was written. */
const CONNECT_FAILURE_CODES = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

function isConnectFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECT_FAILURE_CODES.has(code);
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function toOutboundError(err: unknown, deadline: Deadline): OutboundRequestError {
  if (err instanceof OutboundRequestError) return err;
  if (deadline.timedOut) return new OutboundRequestError('timeout', `no complete response within ${deadline.timeoutMs} ms`);
  const code = (err as { code?: unknown } | null)?.code;
  // undici's connect timeout names the address it dialled.
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) return new OutboundRequestError('timeout', `timed out (${code})`, (err as Error).message);
  const message = err instanceof Error ? err.message : String(err);
  // Socket errors name the address dialled (`connect ECONNREFUSED 10.0.0.7:443`): the code only.
  return new OutboundRequestError('network', typeof code === 'string' ? `the connection failed (${code})` : 'the connection failed', typeof code === 'string' ? `${code}: ${message}` : message);
}

function outgoingHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!REFUSED_HEADERS.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number`);
  return value;
}
