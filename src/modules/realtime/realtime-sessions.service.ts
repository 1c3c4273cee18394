import { Injectable } from '@nestjs/common';
import { Clock, DomainError, isIdOf, newId, usdToMicros } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { AudioGenerationService, VoiceResolver } from '../audio/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import type { CreateRealtimeSessionDto } from './dto/create-realtime-session.dto.js';
import { REALTIME_DEFAULT_MAX_COST_USD } from './dto/create-realtime-session.dto.js';
import { RealtimeRestErrorCode, sessionNotFound } from './realtime-errors.js';
import { RealtimeLeases } from './realtime-leases.js';
import { RealtimeSessionEntity, RealtimeTicketEntity } from './realtime-session.entity.js';
import { RealtimeSessionRepository } from './realtime-session.repository.js';
import {
  type RealtimeSessionCreatedDto,
  type RealtimeSessionResponseDto,
  type RealtimeTicketDto,
  sessionUrl,
  toSessionResource,
} from './realtime-session.resource.js';
import { newTicketToken, SESSION_TTL_MS, TICKET_TTL_MS, ticketHash } from './realtime-tickets.js';
import { RealtimeConnections } from './realtime-connections.js';

/** Realtime turns speak raw PCM (docs/realtime.md › Audio format): no container, playable as it comes. */
export const REALTIME_OUTPUT_FORMAT = 'pcm_24000' as const;

/** The REST side of realtime sessions (DESIGN §4): create, new ticket, read, close. Owner only. */
@Injectable()
export class RealtimeSessionsService {
  constructor(
    private readonly sessions: RealtimeSessionRepository,
    private readonly generations: AudioGenerationService,
    private readonly voices: VoiceResolver,
    private readonly leases: RealtimeLeases,
    private readonly connections: RealtimeConnections,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async create(key: AuthenticatedKey, dto: CreateRealtimeSessionDto): Promise<RealtimeSessionCreatedDto> {
    const maxCostMicros = usdToMicros(dto.maxCostUsd ?? REALTIME_DEFAULT_MAX_COST_USD);
    // The model and voice are checked exactly as audio creation checks them (availability, voice
    // usable with the model, alias of this key): the estimate of a one-character turn, no hold.
    await this.generations.estimate(key, { model: dto.model, mode: 'text_to_speech', prompt: '.', controls: { voiceId: dto.controls.voiceId, outputFormat: REALTIME_OUTPUT_FORMAT } });
    const voiceId = await this.voices.resolve({ apiKeyId: key.id, environment: key.environment }, dto.controls.voiceId, dto.model);
    if (!voiceId) throw new DomainError(400, 'audio.voice_unsupported', `controls.voiceId: "${dto.controls.voiceId}" is not a usable voice of ${dto.model} nor a saved alias of this key`);

    const now = this.clock.now();
    const session = Object.assign(new RealtimeSessionEntity(), {
      id: newId('session'),
      apiKeyId: key.id,
      workspaceId: key.workspaceId,
      environment: key.environment,
      model: dto.model,
      voice: dto.controls.voiceId,
      voiceId,
      outputFormat: REALTIME_OUTPUT_FORMAT,
      maxCostMicros,
      allocatedMicros: 0n,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      closedAt: null,
      createdAt: now,
      updatedAt: now,
    } satisfies RealtimeSessionEntity);
    const token = newTicketToken();
    const ticket = newTicket(session, token, now);
    const limit = this.config.env.REALTIME_MAX_SESSIONS_PER_KEY;
    const outcome = await this.sessions.createWithinLimit(session, ticket, limit, now);
    if (outcome.kind === 'limit_reached') {
      throw new DomainError(
        409,
        RealtimeRestErrorCode.SessionActive,
        `this API key already has ${limit === 1 ? 'an active realtime session' : `${limit} active realtime sessions`}; close it (DELETE) or wait for it to expire`,
      );
    }
    return { ...this.resource(session, now, false), token, tokenExpiresAt: ticket.expiresAt.toISOString() };
  }

  async ticket(key: AuthenticatedKey, sessionId: string): Promise<RealtimeTicketDto> {
    const session = await this.owned(key, sessionId);
    const now = this.clock.now();
    const token = newTicketToken();
    const ticket = newTicket(session, token, now);
    if (!(await this.sessions.replaceTicket(key.id, ticket, now))) {
      throw new DomainError(409, RealtimeRestErrorCode.SessionClosed, 'this realtime session is closed or has expired; create a new one');
    }
    return { sessionId: session.id, token, tokenExpiresAt: ticket.expiresAt.toISOString(), url: sessionUrl(this.config.publicBaseUrl, session.id) };
  }

  async read(key: AuthenticatedKey, sessionId: string): Promise<RealtimeSessionResponseDto> {
    const session = await this.owned(key, sessionId);
    return this.resource(session, this.clock.now(), await this.leases.held(session.id));
  }

  /** Closes the session and its socket wherever it is; accepted turns still finish and are charged. Repeatable. */
  async close(key: AuthenticatedKey, sessionId: string): Promise<RealtimeSessionResponseDto> {
    await this.owned(key, sessionId);
    const now = this.clock.now();
    const session = await this.sessions.closeOwned(key.id, sessionId, now);
    if (!session) throw sessionNotFound();
    // This process first (no round trip), then every other one through Redis.
    this.connections.closeSession(session.id);
    await this.leases.closeEverywhere(session.id);
    return this.resource(session, now, false);
  }

  private async owned(key: AuthenticatedKey, sessionId: string): Promise<RealtimeSessionEntity> {
    const session = isIdOf('session', sessionId) ? await this.sessions.findOwned(key.id, sessionId) : null;
    if (!session) throw sessionNotFound();
    return session;
  }

  private resource(session: RealtimeSessionEntity, now: Date, connected: boolean): RealtimeSessionResponseDto {
    return toSessionResource(session, { publicBaseUrl: this.config.publicBaseUrl, now, connected });
  }
}

/** A ticket of the session: 60 seconds, never past the session's own end (it could not connect then). */
function newTicket(session: Pick<RealtimeSessionEntity, 'id' | 'expiresAt'>, token: string, now: Date): RealtimeTicketEntity {
  return Object.assign(new RealtimeTicketEntity(), {
    tokenHash: ticketHash(token),
    sessionId: session.id,
    expiresAt: new Date(Math.min(now.getTime() + TICKET_TTL_MS, session.expiresAt.getTime())),
    usedAt: null,
    createdAt: now,
  } satisfies RealtimeTicketEntity);
}
