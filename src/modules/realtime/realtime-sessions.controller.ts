import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateRealtimeSessionDto } from './dto/create-realtime-session.dto.js';
import { RealtimeSessionCreatedDto, RealtimeSessionResponseDto, RealtimeTicketDto } from './realtime-session.resource.js';
import { RealtimeRestErrorCode as Code } from './realtime-errors.js';
import { RealtimeSessionsService } from './realtime-sessions.service.js';

/** The realtime REST routes live under /v1/audio/: their codes are `audio.` (realtime-errors.ts). */
const SessionNotFound = () => ApiErrors(404, [[Code.SessionNotFound, 'no session of this key by that id']]);

@ApiTags('realtime')
@ApiKeyRoute()
@ApiKeyUnauthorized('audio')
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
  @ApiErrors(400, ['audio.invalid_field', 'audio.unknown_field', 'audio.voice_unsupported'], { summary: 'checked as audio creation checks them' })
  @ApiErrors(503, [['audio.unavailable', 'the model or the voice catalogue is unavailable']])
  @ApiErrors(409, [[Code.SessionActive, 'the key already has an active session (close it with DELETE)']])
  create(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateRealtimeSessionDto): Promise<RealtimeSessionCreatedDto> {
    return this.sessions.create(key, dto);
  }

  @Post(':sessionId/tickets')
  @HttpCode(200)
  @ApiOperation({ summary: 'A new one-use ticket to (re)connect; earlier tickets of the session stop working' })
  @ApiOkResponse({ type: RealtimeTicketDto })
  @SessionNotFound()
  @ApiErrors(409, [[Code.SessionClosed, 'the session was closed or has expired']])
  ticket(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeTicketDto> {
    return this.sessions.ticket(key, sessionId);
  }

  @Get(':sessionId')
  @ApiOperation({ summary: 'Read a session: status, expiry, budget, whether a connection holds it' })
  @ApiOkResponse({ type: RealtimeSessionResponseDto })
  @SessionNotFound()
  read(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeSessionResponseDto> {
    return this.sessions.read(key, sessionId);
  }

  @Delete(':sessionId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Close a session: its socket is closed (4410); accepted turns still finish and are charged' })
  @ApiOkResponse({ type: RealtimeSessionResponseDto })
  @SessionNotFound()
  close(@CurrentKey() key: AuthenticatedKey, @Param('sessionId') sessionId: string): Promise<RealtimeSessionResponseDto> {
    return this.sessions.close(key, sessionId);
  }
}
