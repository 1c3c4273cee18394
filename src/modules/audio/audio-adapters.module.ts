import { Logger, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { bundledFfmpegPath, ElevenLabsAudioAdapter, SandboxAudioProvider } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';

/**
 * The audio adapters as DI providers, so the provider registry finds them (`@ProviderAdapterFor('audio')`):
 * the sandbox (MP3 through the bundled ffmpeg) and the live `elevenlabs` adapter, used when
 * ELEVENLABS_API_KEY is set. Imported by every audio module (tasks, voices, realtime).
 */
@Module({
  providers: [
    { provide: SandboxAudioProvider, useFactory: () => new SandboxAudioProvider({ ffmpegPath: bundledFfmpegPath() }) },
    {
      provide: ElevenLabsAudioAdapter,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new ElevenLabsAudioAdapter({ apiKey: config.env.ELEVENLABS_API_KEY ?? '', baseUrl: config.env.ELEVENLABS_BASE_URL }),
    },
  ],
  exports: [SandboxAudioProvider, ElevenLabsAudioAdapter],
})
export class AudioAdaptersModule implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AudioAdaptersModule.name);

  constructor(
    private readonly sandbox: SandboxAudioProvider,
    private readonly live: ElevenLabsAudioAdapter,
  ) {}

  onModuleInit(): void {
    if (!this.sandbox.available()) this.logger.warn('no ffmpeg binary found: sandbox audio tasks answer 503');
  }

  async onModuleDestroy(): Promise<void> {
    await this.live.close();
  }
}
