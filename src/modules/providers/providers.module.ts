import { Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, Reflector } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { GuardedHttpClient } from '../../../libs/common/index.js';
import {
  ADAPTER_REGISTRATION,
  type AdapterRegistration,
  parseProviderRoutes,
  type ProviderAdapter,
  ProviderRegistry,
} from '../../../libs/providers/index.js';
import { AppConfig } from '../../config/app-config.js';
import { Metrics } from '../../observability/metrics.service.js';
import { instrumentAdapter } from './instrumented-adapter.js';

/** The extra CA bundle, read once at boot; an unreadable file stops the boot naming the variable. */
function readExtraCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`OUTBOUND_EXTRA_CA_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
}

/**
 * The provider registry, with the routes table (PROVIDER_ROUTES) and the production rule for
 * live keys, and the guarded client for outbound HTTP to user-supplied URLs. Adapters are DI
 * providers of any module whose class carries `@ProviderAdapterFor(capability)`: at boot this
 * module finds them in the container, registers them and checks the routes against them
 * (docs/extending.md › Add a provider). Domains resolve one adapter per request.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: ProviderRegistry,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new ProviderRegistry(
          parseProviderRoutes(config.env.PROVIDER_ROUTES),
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
export class ProvidersModule implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly registry: ProviderRegistry,
    private readonly metrics: Metrics,
  ) {}

  /** Every instance is built before any onModuleInit runs, and nothing routes before bootstrap. */
  onModuleInit(): void {
    const seen = new Set<object>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null || seen.has(instance)) continue;
      seen.add(instance);
      const registration = this.reflector.get<AdapterRegistration | undefined>(ADAPTER_REGISTRATION, instance.constructor);
      // Registered as measured: every call a domain makes through the registry is counted and timed.
      if (registration) this.registry.register(instrumentAdapter(instance as ProviderAdapter, registration.capability, this.metrics), registration);
    }
    this.registry.validateRoutes();
  }
}
