import { Module } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { GuardedHttpClient } from '../../../libs/common/index.js';
import { ProviderRegistry } from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';

/** The extra CA bundle, read once at boot; an unreadable file stops the boot naming the variable. */
function readExtraCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`OUTBOUND_EXTRA_CA_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
}

/**
 * The provider registry, with the credentials the configuration holds and the production rule
 * for live keys, and the guarded client for outbound HTTP to user-supplied URLs. Domain modules
 * import it, register their adapters (live and sandbox) into it in onModuleInit and resolve one
 * per request (one registry per app: Nest makes one instance of a module however often imported).
 */
@Module({
  providers: [
    {
      provide: ProviderRegistry,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new ProviderRegistry(
          {
            gemini: Boolean(config.env.GEMINI_API_KEY),
            elevenlabs: Boolean(config.env.ELEVENLABS_API_KEY),
            kling: Boolean(config.env.KLING_ACCESS_KEY && config.env.KLING_SECRET_KEY),
          },
          // In production a live key never gets sandbox output (DESIGN §1): 503 instead.
          { sandboxForLiveKeys: !config.isProduction },
        ),
    },
    {
      provide: GuardedHttpClient,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new GuardedHttpClient({
          allowHttp: config.env.OUTBOUND_ALLOW_HTTP,
          allowPrivate: config.env.OUTBOUND_ALLOW_PRIVATE,
          ...(config.env.OUTBOUND_EXTRA_CA_FILE ? { ca: readExtraCa(config.env.OUTBOUND_EXTRA_CA_FILE) } : {}),
        }),
    },
  ],
  exports: [ProviderRegistry, GuardedHttpClient],
})
export class ProvidersModule {}
