import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig } from '../../config/app-config.js';
import { REDIS } from '../../queue/redis.provider.js';

/** Extends the lease only while this connection owns it. */
const REFRESH = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
/** Frees the lease only if this connection owns it (a clean close). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The connection lease of each session (docs/realtime.md › Connection lease): which connection
 * owns the session, in Redis, so it holds across API processes. Taken with SET NX PX, kept by a
 * heartbeat (compare-and-extend), freed at once by the owner's close, and otherwise gone within
 * REALTIME_LEASE_MS of its owner's death. Also the close channel: DELETE on any process reaches
 * the process that holds the socket.
 */
@Injectable()
export class RealtimeLeases implements OnApplicationShutdown {
  private readonly logger = new Logger(RealtimeLeases.name);
  private readonly prefix: string;
  private subscriber: Redis | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: AppConfig,
  ) {
    this.prefix = `${config.env.QUEUE_PREFIX}:realtime`;
  }

  private key(sessionId: string): string {
    return `${this.prefix}:lease:${sessionId}`;
  }

  private get closeChannel(): string {
    return `${this.prefix}:close`;
  }

  async acquire(sessionId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.key(sessionId), owner, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** False when the lease is no longer this owner's (expired and taken, or freed by DELETE). */
  async refresh(sessionId: string, owner: string, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(REFRESH, 1, this.key(sessionId), owner, String(ttlMs))) === 1;
  }

  async release(sessionId: string, owner: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key(sessionId), owner);
  }

  async held(sessionId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(sessionId))) === 1;
  }

  /** DELETE of the session: frees its lease whoever holds it and tells every process to close its socket. */
  async closeEverywhere(sessionId: string): Promise<void> {
    await this.redis.del(this.key(sessionId));
    await this.redis.publish(this.closeChannel, sessionId);
  }

  /** Calls `onClose(sessionId)` for each session closed anywhere (one subscriber connection per process). */
  async subscribeToCloses(onClose: (sessionId: string) => void): Promise<void> {
    const subscriber = this.redis.duplicate();
    subscriber.on('error', (error: Error) => this.logger.warn(`realtime close channel: ${error.message}`));
    subscriber.on('message', (_channel: string, sessionId: string) => onClose(sessionId));
    await subscriber.subscribe(this.closeChannel);
    this.subscriber = subscriber;
  }

  async onApplicationShutdown(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }
}
