import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { microsToUsd } from '../../../libs/common/index.js';
import { AUDIO_MODEL_IDS, AUDIO_OUTPUT_FORMATS, type AudioModelId, type AudioOutputFormat } from '../../../libs/providers/index.js';
import type { RealtimeSessionEntity } from './realtime-session.entity.js';

export type RealtimeSessionStatus = 'active' | 'closed' | 'expired';

export class RealtimeBudgetDto {
  @ApiProperty({ description: 'The cap on the estimates of accepted turns' })
  maxCostUsd!: number;

  @ApiProperty({ description: 'Sum of the estimates of the accepted turns (never returns to the budget)' })
  allocatedUsd!: number;

  @ApiProperty({ description: 'maxCostUsd − allocatedUsd' })
  remainingUsd!: number;
}

export class RealtimeSessionControlsDto {
  @ApiProperty({ description: 'The voice as sent at creation (an official id or a saved alias)' })
  voiceId!: string;

  @ApiProperty({ enum: AUDIO_OUTPUT_FORMATS, description: 'Format of `audio.delta` frames: raw signed 16-bit little-endian mono PCM at 24 kHz' })
  outputFormat!: AudioOutputFormat;
}

/** A session as GET and DELETE show it: no ticket. */
export class RealtimeSessionResponseDto {
  @ApiProperty({ example: 'session:7d4c1c9e-2f0a-4a53-9d8e-3f1f7b0c2a11' })
  sessionId!: string;

  @ApiProperty({ description: 'The WebSocket address (wss:// behind https, ws:// when PUBLIC_BASE_URL is http)' })
  url!: string;

  @ApiProperty({ format: 'date-time', description: 'The session ends 50 minutes after its creation' })
  expiresAt!: string;

  @ApiProperty({ enum: ['completeTurn'] })
  inputMode!: 'completeTurn';

  @ApiProperty({ enum: ['active', 'closed', 'expired'] })
  status!: RealtimeSessionStatus;

  @ApiProperty({ description: 'Whether a connection holds the session now (its lease is live)' })
  connected!: boolean;

  @ApiProperty({ enum: AUDIO_MODEL_IDS })
  model!: AudioModelId;

  @ApiProperty({ type: RealtimeSessionControlsDto })
  controls!: RealtimeSessionControlsDto;

  @ApiProperty({ type: RealtimeBudgetDto })
  budget!: RealtimeBudgetDto;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'When DELETE closed it' })
  closedAt?: string;
}

/** The creation answer (spec › Realtime session): the session with its first one-use ticket. */
export class RealtimeSessionCreatedDto extends RealtimeSessionResponseDto {
  @ApiProperty({ description: 'One-use connection ticket: the `token` of the `session.authenticate` frame. Shown only here.' })
  token!: string;

  @ApiProperty({ format: 'date-time', description: 'The ticket is valid 60 seconds' })
  tokenExpiresAt!: string;
}

/** POST …/sessions/{sessionId}/tickets (DESIGN §4). */
export class RealtimeTicketDto {
  @ApiProperty()
  sessionId!: string;

  @ApiProperty({ description: 'One-use connection ticket; replaces any earlier ticket of the session' })
  token!: string;

  @ApiProperty({ format: 'date-time' })
  tokenExpiresAt!: string;

  @ApiProperty()
  url!: string;
}

export const budgetOf = (session: Pick<RealtimeSessionEntity, 'maxCostMicros' | 'allocatedMicros'>): RealtimeBudgetDto => ({
  maxCostUsd: microsToUsd(session.maxCostMicros),
  allocatedUsd: microsToUsd(session.allocatedMicros),
  remainingUsd: microsToUsd(session.maxCostMicros - session.allocatedMicros),
});

export function statusOf(session: Pick<RealtimeSessionEntity, 'closedAt' | 'expiresAt'>, now: Date): RealtimeSessionStatus {
  if (session.closedAt) return 'closed';
  return session.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
}

/** The WebSocket address of a session: PUBLIC_BASE_URL with ws(s):// (DESIGN §4: `/v1/audio/realtime?sessionId=…`). */
export function sessionUrl(publicBaseUrl: string, sessionId: string): string {
  const base = publicBaseUrl.replace(/^http(s?):\/\//i, (_match, secure: string) => (secure ? 'wss://' : 'ws://'));
  return `${base}${REALTIME_PATH}?sessionId=${encodeURIComponent(sessionId)}`;
}

/** The WebSocket path (DESIGN §4). */
export const REALTIME_PATH = '/v1/audio/realtime';

export function toSessionResource(session: RealtimeSessionEntity, input: { publicBaseUrl: string; now: Date; connected: boolean }): RealtimeSessionResponseDto {
  const status = statusOf(session, input.now);
  return {
    sessionId: session.id,
    url: sessionUrl(input.publicBaseUrl, session.id),
    expiresAt: session.expiresAt.toISOString(),
    inputMode: 'completeTurn',
    status,
    connected: status === 'active' && input.connected,
    model: session.model,
    controls: { voiceId: session.voice, outputFormat: session.outputFormat },
    budget: budgetOf(session),
    createdAt: session.createdAt.toISOString(),
    ...(session.closedAt ? { closedAt: session.closedAt.toISOString() } : {}),
  };
}
