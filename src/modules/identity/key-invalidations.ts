import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Clock, withTimeout } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { Metrics } from '../../observability/metrics.service.js';
import { redisOptions } from '../../queue/redis-connection.js';
import { logErrorsQuietly } from '../../queue/redis-error-log.js';
import { decodeInvalidation, encodeInvalidation, KeyCache, type KeyInvalidation } from './key-cache.js';

/** How long a revocation waits for Redis to take its invalidation before it answers 503. */
const PUBLISH_TIMEOUT_MS = 2000;

/**
 * How often the subscriber asks Redis for a PING while subscribed, and how long it waits: a
 * connection that died silently (a partition, no reset) is noticed within about 8 s, not when
 * TCP gives up, and the cache is bypassed from then on.
 */
const HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 3000;

/** Redis CLIENT SETNAME of the connections, so an operator can tell them apart in CLIENT LIST. */
const SUBSCRIBER_NAME = 'svc-key-invalidations-sub';
const PUBLISHER_NAME = 'svc-key-invalidations-pub';

/**
 * The invalidation channel of the key cache (docs/decisions.md › Platform, "Key cache with
 * instant revocation"): `${QUEUE_PREFIX}:api-key-invalidations` on Redis.
 *
 * - Subscriber: one connection of its own per API process, opened by the first authenticated
 *   request (workers and the CLI never open it). Each message is applied to the cache as it is
 *   read from the socket, before anything else runs. `ready` is true only between a confirmed
 *   SUBSCRIBE and the loss of that connection; while it is false the guard neither reads nor
 *   writes the cache (every request reads PostgreSQL). Losing the connection and getting it
 *   back both clear the cache (and move its generation on): what changed while the process was
 *   deaf is never served. ioredis reconnects by itself; the channel is subscribed again by hand
 *   on each `ready` (autoResubscribe off), so "subscribed" means Redis confirmed it.
 * - Publisher: one more connection, opened by the first revocation. `publish` waits for Redis'
 *   answer (at most PUBLISH_TIMEOUT_MS) and throws when it does not come.
 */
@Injectable()
export class KeyInvalidations implements OnApplicationShutdown {
  readonly cache: KeyCache;
  readonly channel: string;
  private readonly logger = new Logger(KeyInvalidations.name);
  private subscriber: Redis | undefined;
  private publisher: Redis | undefined;
  private subscribed = false;
  private closed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private pinging = false;
  private readonly stats = { subscriptions: 0, losses: 0, received: 0 };

  constructor(
    private readonly config: AppConfig,
    clock: Clock,
    metrics: Metrics,
  ) {
    this.cache = new KeyCache(config.env.API_KEY_CACHE_TTL_MS, () => clock.now().getTime());
    this.channel = `${config.env.QUEUE_PREFIX}:api-key-invalidations`;
    metrics.gauge('svc_api_key_cache_subscribed', 'Whether the API key invalidation channel is subscribed (0: cache bypassed)', [], (gauge) => {
      gauge.set(this.subscribed ? 1 : 0);
      return Promise.resolve();
    });
    metrics.gauge('svc_api_key_cache_entries', 'API keys held in this process\u2019s key cache', [], (gauge) => {
      gauge.set(this.cache.size);
      return Promise.resolve();
    });
  }

  /** True while the channel is subscribed: only then may the cache be read or written. */
  get ready(): boolean {
    return this.subscribed;
  }

  /** Subscriptions confirmed, connections lost, messages applied (tests and diagnostics). */
  counters(): { subscriptions: number; losses: number; received: number } {
    return { ...this.stats };
  }

  /** Opens the subscriber once; a no-op when the cache is off or the app is closing. */
  start(): void {
    if (this.subscriber || this.closed || !this.cache.enabled) return;
    const subscriber = new Redis({ ...redisOptions(this.config.env.REDIS_URL), autoResubscribe: false, connectionName: SUBSCRIBER_NAME });
    logErrorsQuietly(subscriber, 'API key invalidations (subscriber)', this.logger);
    subscriber.on('ready', () => void this.subscribe(subscriber));
    subscriber.on('close', () => this.lost());
    subscriber.on('message', (_channel: string, message: string) => {
      this.stats.received++;
      this.cache.invalidate(decodeInvalidation(message));
    });
    this.subscriber = subscriber;
    this.heartbeat = setInterval(() => void this.checkAlive(subscriber), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** A subscribed connection that does not answer a PING is dropped (and reconnected): deaf until proven otherwise. */
  private async checkAlive(subscriber: Redis): Promise<void> {
    if (!this.subscribed || this.pinging || this.subscriber !== subscriber) return;
    this.pinging = true;
    try {
      await withTimeout(subscriber.ping(), HEARTBEAT_TIMEOUT_MS, 'API key invalidations heartbeat (Redis)');
    } catch (error) {
      if (this.subscriber !== subscriber || this.closed) return;
      this.logger.warn(`${String(error)}: reconnecting the subscriber`);
      this.lost();
      subscriber.disconnect(true);
    } finally {
      this.pinging = false;
    }
  }

  /** Tells every API process (this one included) to forget `what`; throws when Redis did not take it. */
  async publish(what: KeyInvalidation): Promise<void> {
    if (this.closed) throw new Error('API key invalidations: the app is closing');
    // This process first, without waiting for its own subscription to hear it.
    this.cache.invalidate(what);
    this.publisher ??= this.openPublisher();
    await withTimeout(this.publisher.publish(this.channel, encodeInvalidation(what)), PUBLISH_TIMEOUT_MS, 'API key invalidation (Redis)');
  }

  private openPublisher(): Redis {
    // One retry: a revocation while Redis is away fails within a second or two, not after the outage.
    const publisher = new Redis({ ...redisOptions(this.config.env.REDIS_URL), maxRetriesPerRequest: 1, connectionName: PUBLISHER_NAME });
    logErrorsQuietly(publisher, 'API key invalidations (publisher)', this.logger);
    return publisher;
  }

  private async subscribe(subscriber: Redis): Promise<void> {
    try {
      await subscriber.subscribe(this.channel);
    } catch (error) {
      // The connection went away again: its next `ready` subscribes again.
      this.logger.warn(`API key invalidations: subscribe failed (${String(error)}); the key cache stays bypassed`);
      return;
    }
    if (this.subscriber !== subscriber || subscriber.status !== 'ready' || this.closed) return;
    // Deaf until now: whatever the cache holds may have been revoked meanwhile.
    this.cache.clear();
    this.subscribed = true;
    this.stats.subscriptions++;
    if (this.stats.losses > 0) this.logger.log('API key invalidations: subscribed again; key cache cleared and back in use');
  }

  private lost(): void {
    // Also moves the generation on, so a lookup in flight does not write into the cache later.
    this.cache.clear();
    if (!this.subscribed) return;
    this.subscribed = false;
    this.stats.losses++;
    if (!this.closed) this.logger.warn('API key invalidations: subscription lost; every request reads PostgreSQL until it is back');
  }

  onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.subscribed = false;
    clearInterval(this.heartbeat);
    const connections = [this.subscriber, this.publisher].filter((c): c is Redis => c !== undefined);
    this.subscriber = undefined;
    this.publisher = undefined;
    // Nothing to flush: a plain disconnect never waits on a Redis that is away.
    for (const connection of connections) connection.disconnect();
    return Promise.resolve();
  }
}
