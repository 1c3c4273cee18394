import { Module, type OnModuleDestroy } from '@nestjs/common';
import { GeminiImageAdapter, SandboxImageProvider } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';

/**
 * The image adapters as DI providers, so the provider registry finds them
 * (`@ProviderAdapterFor('image')`): the sandbox (real PNGs drawn with sharp) and the live
 * `gemini-image` adapter, used when GEMINI_API_KEY is set. Imported by the images module.
 */
@Module({
  providers: [
    SandboxImageProvider,
    {
      provide: GeminiImageAdapter,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new GeminiImageAdapter({ apiKey: config.env.GEMINI_API_KEY ?? '', baseUrl: config.env.GEMINI_BASE_URL }),
    },
  ],
  exports: [SandboxImageProvider, GeminiImageAdapter],
})
export class ImageAdaptersModule implements OnModuleDestroy {
  constructor(private readonly live: GeminiImageAdapter) {}

  async onModuleDestroy(): Promise<void> {
    await this.live.close();
  }
}
