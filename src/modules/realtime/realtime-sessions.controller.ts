import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateRealtimeSessionDto } from './dto/create-realtime-session.dto.js';
import { RealtimeSessionCreatedDto, RealtimeSessionResponseDto, RealtimeTicketDto } from './realtime-session.resource.js';
import { RealtimeSessionsService } from './realtime-sessions.service.js';

const NOT_FOUND = '`audio.session_not_found`: no session of this key by that id';

@ApiTags('realtime')
@ApiKeyRoute()
@ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`audio.unauthorized`' })
@Controller('v1/audio/realtime/sessions')
export class RealtimeSessionsController {
  constructor(private readonly sessions: RealtimeSessionsService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Open a realtime session (complete turns of speech over a WebSocket)',
    description:
      'Connect to `url` and send `{"type":"session.authenticate","token":…}` as the first frame within 5 s; the ticket is valid 60 s, once. The session lasts 50 minutes; one active session per API key. Frames: docs/realtime.md.',
  })
  @ApiOkResponse({ type: RealtimeSessionCreatedDto })
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: '`audio.invalid_field`, `audio.unknown_field`, `audio.voice_unsupported`' })
  @ApiConflictResponse({ type: ErrorEnvelopeDto, description: '`audio.session_active`: the key already has an active session (close it with DELETE)' })
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateRealtimeSessionDto): Promise<RealtimeSessionCreatedDto> {
    return this.sessions.create(key, dto);
  }

  @Post(':sessionId/tickets')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new one-use ticket to (re)connect; earlier tickets of the session stop working' })
  @ApiOkResponse({ type: RealtimeTicketDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: NOT_FOUND })
  @ApiConflictResponse({ type: ErrorEnvelopeDto, description: '`audio.session_closed`: the session was closed or has expired' })
  ticket(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeTicketDto> {
    return this.sessions.ticket(key, sessionId);
  }

  @Get(':sessionId')
  @ApiOperation({ summary: 'Read a session: status, expiry, budget, whether a connection holds it' })
  @ApiOkResponse({ type: RealtimeSessionResponseDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: NOT_FOUND })
  read(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeSessionResponseDto> {
    return this.sessions.read(key, sessionId);
  }

  @Delete(':sessionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Close a session: its socket is closed (4410); accepted turns still finish and are charged' })
  @ApiOkResponse({ type: RealtimeSessionResponseDto })
  @ApiNotFoundResponse({ type: ErrorEnvelopeDto, description: NOT_FOUND })
  close(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeSessionResponseDto> {
    return this.sessions.close(key, sessionId);
  }
}
