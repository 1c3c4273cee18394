import type { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../../../libs/common/index.js';
import type { IdentityService } from '../identity/index.js';
import { RealtimeCloseCode, RealtimeFrameErrorCode } from './realtime-errors.js';
import { FrameRefusal, parseClientFrame, type ServerFrame } from './realtime-frames.js';
import type { RealtimeConnections, RegisteredConnection } from './realtime-connections.js';
import type { RealtimeLeases } from './realtime-leases.js';
import type { RealtimeMetrics } from './realtime-metrics.js';
import type { RealtimeSessionEntity } from './realtime-session.entity.js';
import type { RealtimeSessionRepository } from './realtime-session.repository.js';
import { budgetOf } from './realtime-session.resource.js';
import { TICKET_SHAPE, ticketHash } from './realtime-tickets.js';
import type { RealtimeTurns, TurnContext } from './realtime-turns.js';

export interface ConnectionSettings {
  leaseMs: number;
  authTimeoutMs: number;
  maxBufferedBytes: number;
}

export interface ConnectionDeps {
  sessions: RealtimeSessionRepository;
  leases: RealtimeLeases;
  turns: RealtimeTurns;
  identity: IdentityService;
  metrics: RealtimeMetrics;
  registry: RealtimeConnections;
  clock: Clock;
  logger: Logger;
  settings: ConnectionSettings;
}

/** Frames a connection may have waiting for the one before (an authentication in progress). */
const MAX_QUEUED_FRAMES = 32;
/** A close the peer does not answer ends the socket after this long. */
const CLOSE_GRACE_MS = 2000;
/** Longest timer Node keeps (about 24.8 days): a session ends long before. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One WebSocket of the realtime gateway (docs/realtime.md › Connection): authentication by a
 * one-use ticket within the time limit, the session's lease (taken, kept by a heartbeat, freed on
 * close), the session's end, frames in order, one turn in flight, and a bounded send buffer.
 * Turns run apart from the socket: its close only stops the frames.
 */
export class RealtimeConnection implements RegisteredConnection {
  readonly id = randomUUID();
  state: 'authenticating' | 'ready' | 'closed' = 'authenticating';
  private session: RealtimeSessionEntity | null = null;
  private context: TurnContext | null = null;
  private ownsLease = false;
  private authenticating = false;
  private turn: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private alive = true;
  private closeSent: number | null = null;
  private authTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private expiry: NodeJS.Timeout | null = null;

  constructor(
    private readonly ws: WebSocket,
    /** The `sessionId` of the URL; the ticket must be this session's. */
    private readonly requestedSessionId: string | null,
    private readonly deps: ConnectionDeps,
  ) {}

  get sessionId(): string | null {
    return this.session?.id ?? null;
  }

  get open(): boolean {
    return this.state !== 'closed' && this.closeSent === null && this.ws.readyState === this.ws.OPEN;
  }

  start(): void {
    this.deps.registry.add(this);
    this.authTimer = setTimeout(() => this.close(RealtimeCloseCode.AuthTimeout, 'no session.authenticate frame within 5 seconds'), this.deps.settings.authTimeoutMs);
    this.ws.on('message', (data: RawData, isBinary: boolean) => this.receive(data, isBinary));
    this.ws.on('pong', () => (this.alive = true));
    this.ws.on('close', (code: number) => this.closed(code));
    this.ws.on('error', (error: Error) => this.deps.logger.debug(`connection ${this.id}: ${error.message}`));
  }

  /** Sends a frame; past the send buffer bound the client is not reading: close 4413 (turns go on). */
  send(frame: ServerFrame): void {
    if (!this.open) return;
    const data = JSON.stringify(frame);
    if (this.ws.bufferedAmount + data.length > this.deps.settings.maxBufferedBytes) {
      this.close(RealtimeCloseCode.SlowConsumer, 'the client is not reading: too much audio waiting to be sent');
      return;
    }
    this.ws.send(data);
  }

  close(code: number, reason: string): void {
    if (this.state === 'closed' || this.closeSent !== null) return;
    this.closeSent = code;
    this.clearTimers();
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    // A peer that does not answer the close (not reading, gone) is cut off.
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.state === 'closed' || this.closeSent !== null) return;
    if (++this.queued > MAX_QUEUED_FRAMES) {
      this.close(1008, 'too many frames sent before the previous ones were handled');
      return;
    }
    this.chain = this.chain
      .then(() => this.handle(data, isBinary))
      .catch((error: unknown) => {
        this.deps.logger.error(`connection ${this.id}: ${String(error)}`);
        this.close(RealtimeCloseCode.InternalError, 'internal error; reconnect with a new ticket');
      })
      .finally(() => this.queued--);
  }

  private async handle(data: RawData, isBinary: boolean): Promise<void> {
    if (this.state === 'closed' || this.closeSent !== null) return;
    if (this.state === 'authenticating') {
      if (this.authenticating) return;
      this.authenticating = true;
      if (this.authTimer) clearTimeout(this.authTimer);
      let token: string | null = null;
      if (!isBinary) {
        try {
          const frame = parseClientFrame(rawText(data));
          if (frame.type === 'session.authenticate') token = frame.token;
        } catch {
          token = null;
        }
      }
      if (token === null) return this.close(RealtimeCloseCode.Unauthorized, 'the first frame must be {"type":"session.authenticate","token":…}');
      return this.authenticate(token);
    }
    if (isBinary) return this.refuse(RealtimeFrameErrorCode.BinaryFrame, 'binary frames are not supported: send JSON text frames');
    let frame;
    try {
      frame = parseClientFrame(rawText(data));
    } catch (error) {
      if (error instanceof FrameRefusal) return this.refuse(error.code, error.message, error.turnId);
      throw error;
    }
    if (frame.type === 'session.authenticate') return this.refuse(RealtimeFrameErrorCode.AlreadyAuthenticated, 'this connection is already authenticated');
    if (this.deps.registry.draining) return this.refuse(RealtimeFrameErrorCode.ShuttingDown, 'the server is shutting down; reconnect with a new ticket and commit the turn there', frame.turnId);
    if (this.turn) return this.refuse(RealtimeFrameErrorCode.TurnInFlight, 'a turn is in flight; commit the next one after its turn.completed or turn.status', frame.turnId);
    const committedAt = performance.now();
    const context = this.context!;
    const turn = (async () => {
      // A key revoked since the connection opened takes no more turns (REST refuses it at once too).
      const key = await this.deps.identity.getApiKey(context.key.id).catch(() => null);
      if (!key || key.status !== 'active') return this.close(RealtimeCloseCode.Unauthorized, 'the API key of this session is revoked');
      await this.deps.turns.run(context, frame.turnId, frame.text, this, committedAt);
    })()
      .catch((error: unknown) => this.deps.logger.error(`turn ${frame.turnId} of ${this.sessionId}: ${String(error)}`))
      .finally(() => {
        if (this.turn === turn) this.turn = null;
      });
    this.turn = turn;
    this.deps.registry.track(turn);
  }

  private async authenticate(token: string): Promise<void> {
    const { sessions, leases, identity, clock, settings } = this.deps;
    const sessionId = this.requestedSessionId;
    const hash = sessionId && TICKET_SHAPE.test(token) ? ticketHash(token) : null;
    const session = hash ? await sessions.consumeTicket(hash, sessionId!, clock.now()) : null;
    if (!session) {
      // A good ticket of a session closed since: another ticket would be refused too (409).
      if (hash && (await sessions.endedSessionOfTicket(hash, sessionId!, clock.now()))) {
        return this.close(RealtimeCloseCode.SessionEnded, 'the session was closed or has expired; create a new one');
      }
      return this.close(RealtimeCloseCode.Unauthorized, 'bad, used or expired ticket; ask for a new one (POST …/tickets)');
    }
    const key = await identity.getApiKey(session.apiKeyId).catch(() => null);
    if (!key || key.status !== 'active') return this.close(RealtimeCloseCode.Unauthorized, 'the API key of this session is revoked');
    if (this.closeSent !== null || this.state === 'closed') return;
    if (!(await leases.acquire(session.id, this.id, settings.leaseMs))) {
      return this.close(RealtimeCloseCode.Conflict, 'the session already has a live connection');
    }
    this.ownsLease = true;
    this.session = session;
    if (this.closeSent !== null || (this.state as string) === 'closed') {
      // Gone while the lease was taken: free it at once.
      await this.releaseLease();
      return;
    }
    this.context = { session, key: { id: session.apiKeyId, workspaceId: session.workspaceId, environment: session.environment } };
    this.state = 'ready';
    this.deps.registry.bind(session.id, this);
    const beat = Math.max(250, Math.floor(settings.leaseMs / 3));
    this.heartbeat = setInterval(() => void this.beat(), beat);
    this.heartbeat.unref();
    const leftMs = session.expiresAt.getTime() - clock.now().getTime();
    this.expiry = setTimeout(() => this.close(RealtimeCloseCode.SessionEnded, 'the session expired'), Math.min(MAX_TIMER_MS, Math.max(0, leftMs)));
    this.expiry.unref();
    this.send({ type: 'session.ready', sessionId: session.id, expiresAt: session.expiresAt.toISOString(), budget: budgetOf(session) });
  }

  /** Keeps the lease (compare-and-extend) and checks the peer answers pings. */
  private async beat(): Promise<void> {
    if (this.state !== 'ready' || !this.session) return;
    if (!this.alive) {
      // No pong since the last beat: the peer is gone without a close (network cut). Free the session.
      this.ws.terminate();
      return;
    }
    this.alive = false;
    try {
      this.ws.ping();
    } catch {
      // closing already
    }
    try {
      if (!(await this.deps.leases.refresh(this.session.id, this.id, this.deps.settings.leaseMs))) {
        this.ownsLease = false;
        this.close(RealtimeCloseCode.Conflict, 'this connection lost the session lease');
      }
    } catch (error) {
      // Redis away: the lease may lapse; the next beat tries again.
      this.deps.logger.warn(`session ${this.session.id}: lease refresh failed: ${String(error)}`);
    }
  }

  private refuse(code: string, message: string, turnId?: string): void {
    this.send({ type: 'error', code, message, ...(turnId !== undefined ? { turnId } : {}) });
  }

  private closed(code: number): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearTimers();
    this.deps.registry.remove(this);
    this.deps.metrics.closes.inc({ code: String(this.closeSent ?? code) });
    void this.releaseLease();
  }

  /** A connection that closes, cleanly or not, frees its lease at once; only a dead process leaves it to expire. */
  private async releaseLease(): Promise<void> {
    if (!this.ownsLease || !this.session) return;
    this.ownsLease = false;
    await this.deps.leases.release(this.session.id, this.id).catch((error: unknown) => this.deps.logger.warn(`session ${this.session?.id}: lease release failed: ${String(error)}`));
  }

  private clearTimers(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.expiry) clearTimeout(this.expiry);
    this.authTimer = this.heartbeat = this.expiry = null;
  }
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
