import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AudioModule, AudioVoicesModule } from '../audio/index.js';
import { IdentityModule } from '../identity/identity.module.js';
import { RealtimeConnections } from './realtime-connections.js';
import { RealtimeLeases } from './realtime-leases.js';
import { RealtimeMetrics } from './realtime-metrics.js';
import { RealtimeSessionEntity, RealtimeTicketEntity, RealtimeTurnEntity } from './realtime-session.entity.js';
import { RealtimeSessionRepository } from './realtime-session.repository.js';
import { RealtimeSessionsController } from './realtime-sessions.controller.js';
import { RealtimeSessionsService } from './realtime-sessions.service.js';
import { RealtimeTurns } from './realtime-turns.js';
import { RealtimeGateway } from './realtime.gateway.js';

/**
 * Realtime sessions (docs/realtime.md): the REST routes under /v1/audio/realtime/sessions (their
 * errors are `audio.`, AudioModule's prefix), the WebSocket gateway, the connection lease in Redis.
 * A turn is an audio task made through AudioModule's AudioSpeechService: it is listed, reconciled,
 * retained and shown to operators as any audio task.
 */
@Module({
  imports: [TypeOrmModule.forFeature([RealtimeSessionEntity, RealtimeTicketEntity, RealtimeTurnEntity]), AudioModule, AudioVoicesModule, IdentityModule],
  controllers: [RealtimeSessionsController],
  providers: [RealtimeSessionRepository, RealtimeSessionsService, RealtimeLeases, RealtimeConnections, RealtimeMetrics, RealtimeTurns, RealtimeGateway],
})
export class RealtimeModule {}
