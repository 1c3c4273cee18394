import { Logger, type OnModuleDestroy } from '@nestjs/common';
import { type OnGatewayConnection, type OnGatewayInit, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket, WebSocketServer } from 'ws';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { IdentityService } from '../identity/index.js';
import { RealtimeConnection, type ConnectionDeps } from './realtime-connection.js';
import { RealtimeConnections } from './realtime-connections.js';
import { RealtimeCloseCode } from './realtime-errors.js';
import { RealtimeLeases } from './realtime-leases.js';
import { RealtimeMetrics } from './realtime-metrics.js';
import { RealtimeSessionRepository } from './realtime-session.repository.js';
import { REALTIME_PATH } from './realtime-session.resource.js';
import { RealtimeTurns } from './realtime-turns.js';

/**
 * The realtime WebSocket (DESIGN §4, §10) on the HTTP API's own port and server, through
 * `@nestjs/platform-ws` (raw `ws`): `/v1/audio/realtime?sessionId=…`. Each socket is a
 * RealtimeConnection; this class admits them (connection cap, shutdown) and drains on shutdown.
 */
@WebSocketGateway({ path: REALTIME_PATH })
export class RealtimeGateway implements OnGatewayInit, OnGatewayConnection, OnModuleDestroy {
  private readonly logger = new Logger(RealtimeGateway.name);
  private readonly deps: ConnectionDeps;

  constructor(
    sessions: RealtimeSessionRepository,
    private readonly leases: RealtimeLeases,
    turns: RealtimeTurns,
    identity: IdentityService,
    metrics: RealtimeMetrics,
    private readonly registry: RealtimeConnections,
    clock: Clock,
    private readonly config: AppConfig,
  ) {
    const env = config.env;
    this.deps = {
      sessions,
      leases,
      turns,
      identity,
      metrics,
      registry,
      clock,
      logger: this.logger,
      settings: { leaseMs: env.REALTIME_LEASE_MS, authTimeoutMs: env.REALTIME_AUTH_TIMEOUT_MS, maxBufferedBytes: env.REALTIME_MAX_BUFFERED_BYTES },
    };
  }

  afterInit(server: WebSocketServer): void {
    // A client frame over the limit is refused by `ws` itself: close 1009 before it is buffered whole.
    server.options.maxPayload = this.config.env.REALTIME_MAX_FRAME_BYTES;
    // DELETE on any process closes the socket wherever it is (ioredis resubscribes after a reconnect).
    this.leases
      .subscribeToCloses((sessionId) => this.registry.closeSession(sessionId))
      .catch((error: unknown) => this.logger.error(`realtime close channel: subscription failed: ${String(error)}`));
  }

  handleConnection(ws: WebSocket, request: IncomingMessage): void {
    if (this.registry.draining) {
      ws.close(RealtimeCloseCode.ServiceRestart, 'the server is shutting down; reconnect with a new ticket');
      return;
    }
    if (this.registry.size >= this.config.env.REALTIME_MAX_CONNECTIONS) {
      this.deps.metrics.closes.inc({ code: String(RealtimeCloseCode.TryAgainLater) });
      ws.close(RealtimeCloseCode.TryAgainLater, 'this server holds its maximum of realtime connections; try again later');
      return;
    }
    new RealtimeConnection(ws, sessionIdOf(request), this.deps).start();
  }

  /**
   * SIGTERM (docs/realtime.md › Shutdown): no new connection or turn; the turns in flight finish and
   * send their last frames (up to REALTIME_SHUTDOWN_GRACE_MS); then every connection is closed
   * with 1012, so clients reconnect (to another instance) with a new ticket. A turn still running
   * after the grace is finished by the worker (its stream lease lapses): never lost nor charged twice.
   */
  async onModuleDestroy(): Promise<void> {
    this.registry.draining = true;
    const inFlight = this.registry.inFlight();
    if (inFlight.length > 0) {
      this.logger.log(`shutting down: waiting for ${inFlight.length} realtime turn(s) in flight`);
      const grace = new AbortController();
      await Promise.race([Promise.allSettled(inFlight), sleep(this.config.env.REALTIME_SHUTDOWN_GRACE_MS, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    const open = this.registry.connections();
    for (const connection of open) connection.close(RealtimeCloseCode.ServiceRestart, 'the server is restarting; reconnect with a new ticket');
    // Let the close frames go out before the adapter terminates what is left.
    if (open.length > 0) await sleep(100);
  }
}

function sessionIdOf(request: IncomingMessage): string | null {
  try {
    const id = new URL(request.url ?? '', 'ws://localhost').searchParams.get('sessionId');
    return id && id.length <= 100 ? id : null;
  } catch {
    return null;
  }
}
