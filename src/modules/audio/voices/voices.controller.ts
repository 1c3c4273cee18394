import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiKeyUnauthorized } from '../../../app/openapi-errors.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../../identity/index.js';
import { BodyBoundGuard, VOICE_IMPORT_SHAPE } from '../body-bound.guard.js';
import { ImportVoiceDto } from './dto/import-voice.dto.js';
import { type VoiceLibraryRequest, VoiceLibraryQueryPipe } from './dto/voice-library.query.js';
import { VoiceErrorCode as Code } from './voice-errors.js';
import { SavedVoicesService } from './saved-voices.service.js';
import { SavedVoiceListDto, SavedVoiceResponseDto, VoiceLibraryPageDto } from './voice.resource.js';
import { VoiceLibraryService } from './voice-library.service.js';

@ApiTags('audio')
@ApiKeyRoute()
@ApiKeyUnauthorized('audio')
@Controller('v1/audio')
export class VoicesController {
  constructor(
    private readonly library: VoiceLibraryService,
    private readonly saved: SavedVoicesService,
  ) {}

  @Get('voice-library')
  @ApiOperation({ summary: 'The voice library: usable voices, 30 a page, filtered; `voiceId` looks one voice up' })
  @ApiQuery({ name: 'search', required: false, description: 'Name (substring, any case) or exact official id; at most 100 characters' })
  @ApiQuery({ name: 'language', required: false, description: 'Two- or three-letter language code' })
  @ApiQuery({ name: 'gender', required: false, enum: ['female', 'male', 'neutral'] })
  @ApiQuery({ name: 'age', required: false, enum: ['young', 'middle_aged', 'old'] })
  @ApiQuery({ name: 'page', required: false, description: 'Zero-based, at most 10000' })
  @ApiQuery({ name: 'voiceId', required: false, description: 'Exact lookup: that voice when it is usable, else an empty page' })
  @ApiOkResponse({ type: VoiceLibraryPageDto })
  @ApiErrors(400, [[Code.InvalidQuery, 'an unknown, repeated or malformed parameter']])
  @ApiErrors(503, ['audio.unavailable'])
  voiceLibrary(@CurrentKey() key: AuthenticatedKey, @Query(VoiceLibraryQueryPipe) query: VoiceLibraryRequest): Promise<VoiceLibraryPageDto> {
    return this.library.page(key, query);
  }

  @Get('voices')
  @ApiOperation({ summary: "The calling key's saved voices, newest first" })
  @ApiOkResponse({ type: SavedVoiceListDto })
  list(@CurrentKey() key: AuthenticatedKey): Promise<SavedVoiceListDto> {
    return this.saved.list(key);
  }

  @Post('voices/import')
  @HttpCode(200)
  @UseGuards(new BodyBoundGuard(VOICE_IMPORT_SHAPE))
  @ApiOperation({ summary: 'Save an official voice as a favourite (no clone, no transfer); importing it again updates the alias' })
  @ApiOkResponse({ type: SavedVoiceResponseDto })
  @ApiErrors(400, [Code.VoiceUnsupported, 'audio.invalid_field', 'audio.unknown_field'])
  @ApiErrors(409, [[Code.AliasConflict, 'the alias names another saved voice'], [Code.SavedVoicesLimit, 'the key holds the most saved voices it may keep']])
  @ApiErrors(503, [['audio.unavailable', 'the voice catalogue cannot be read']])
  import(@CurrentKey() key: AuthenticatedKey, @Body() dto: ImportVoiceDto): Promise<SavedVoiceResponseDto> {
    return this.saved.import(key, dto);
  }

  @Delete('voices/:voiceIdOrAlias')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a saved voice of the calling key, named by voice id or alias' })
  @ApiNoContentResponse()
  @ApiErrors(404, [[Code.VoiceNotFound, 'not saved by this key']])
  remove(@CurrentKey() key: AuthenticatedKey, @Param('voiceIdOrAlias') voiceIdOrAlias: string): Promise<void> {
    return this.saved.remove(key, voiceIdOrAlias);
  }
}
