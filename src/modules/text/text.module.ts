import { Module, type OnModuleDestroy } from '@nestjs/common';
import { GeminiTextAdapter, SandboxTextProvider } from '../../../libs/providers/index.js';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { AppConfig } from '../../config/app-config.js';
import { BillingModule } from '../billing/billing.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { AbandonedTextHolds } from './abandoned-text-holds.js';
import { TextMediaResolver } from './text-media.resolver.js';
import { TextController } from './text.controller.js';
import { TextGenerationUseCase } from './text-generation.use-case.js';
import { TextHttpTransport } from './text-http.transport.js';

/** Text generation: the Chat-Completions-style and Responses-style operations, and the model list. */
@Module({
  imports: [
    BillingModule,
    ProvidersModule,
    ErrorDomainsModule.forFeature({ domain: 'text', pathPrefixes: ['/api/svc/v1/chat/', '/api/svc/v1/responses', '/api/svc/v1/models'] }),
  ],
  controllers: [TextController],
  providers: [
    TextGenerationUseCase,
    TextHttpTransport,
    TextMediaResolver,
    AbandonedTextHolds,
    SandboxTextProvider,
    {
      provide: GeminiTextAdapter,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => new GeminiTextAdapter({ apiKey: config.env.GEMINI_API_KEY ?? '', baseUrl: config.env.GEMINI_BASE_URL }),
    },
  ],
  // Other transports (a WebSocket gateway) run the same use case.
  exports: [TextGenerationUseCase],
})
export class TextModule implements OnModuleDestroy {
  constructor(private readonly gemini: GeminiTextAdapter) {}

  async onModuleDestroy(): Promise<void> {
    await this.gemini.close();
  }
}
