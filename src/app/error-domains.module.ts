import { type DynamicModule, Global, Module } from '@nestjs/common';
import { type ErrorDomain, ErrorDomains, type ErrorEnvelopeRenderer } from '../../libs/common/index.js';

export interface ErrorPrefixOptions {
  /** The prefix of the codes (`audio` → `audio.invalid_field`). */
  domain: ErrorDomain;
  /** URL path prefixes whose errors carry it; the longest registered prefix of a path wins. */
  pathPrefixes: readonly string[];
  /** The domain's own error body (the alternate provider's envelope); `{error:{code,message}}` otherwise. */
  envelope?: ErrorEnvelopeRenderer;
}

/** A domain's error prefixes (`ErrorDomainsModule.forFeature`); a module of its own per registration. */
@Module({})
export class ErrorPrefixFeatureModule {}

/**
 * The app's one ErrorDomains (the global exception filter reads it). Global, like config: a
 * platform registry every domain adds its paths to from its own module's `imports`.
 */
@Global()
@Module({})
export class ErrorDomainsModule {
  /** `domains` is the instance createApp hands the exception filter. */
  static forRoot(domains: ErrorDomains = new ErrorDomains()): DynamicModule {
    return { module: ErrorDomainsModule, providers: [{ provide: ErrorDomains, useValue: domains }], exports: [ErrorDomains] };
  }

  /** `imports: [ErrorDomainsModule.forFeature({ domain: 'audio', pathPrefixes: ['/v1/audio/'] })]` */
  static forFeature(options: ErrorPrefixOptions): DynamicModule {
    return {
      module: ErrorPrefixFeatureModule,
      providers: [
        {
          // Nothing injects it: instantiating it (before any onModuleInit, long before listen) is the registration.
          provide: `error-prefix:${options.domain}:${options.pathPrefixes.join(',')}`,
          inject: [ErrorDomains],
          useFactory: (domains: ErrorDomains) => domains.register(options.domain, options.pathPrefixes, options.envelope),
        },
      ],
    };
  }
}
