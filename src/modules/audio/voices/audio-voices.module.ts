import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ProvidersModule } from '../../providers/providers.module.js';
import { AudioAdaptersModule } from '../audio-adapters.module.js';
import { SavedVoiceEntity } from './saved-voice.entity.js';
import { SavedVoiceRepository } from './saved-voice.repository.js';
import { SavedVoiceResolver } from './saved-voice.resolver.js';
import { SavedVoicesService } from './saved-voices.service.js';
import { VoiceCatalogue } from './voice-catalogue.js';
import { VoiceLibraryService } from './voice-library.service.js';
import { VoicePreviews } from './voice-previews.js';
import { VoiceResolver } from './voice-resolver.js';
import { VoicesController } from './voices.controller.js';

/**
 * Voices of the audio domain: the library, saved voices with aliases, playable previews, and the
 * VoiceResolver that generation and realtime inject. Media is global; the adapters come from
 * AudioAdaptersModule and are reached through the provider registry (routed per key environment).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SavedVoiceEntity]), ProvidersModule, AudioAdaptersModule],
  controllers: [VoicesController],
  providers: [
    SavedVoiceRepository,
    VoiceCatalogue,
    VoicePreviews,
    VoiceLibraryService,
    SavedVoicesService,
    SavedVoiceResolver,
    { provide: VoiceResolver, useExisting: SavedVoiceResolver },
  ],
  exports: [VoiceResolver],
})
export class AudioVoicesModule {}
