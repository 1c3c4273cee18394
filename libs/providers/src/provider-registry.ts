import type { AdapterName, Capability, ProviderCredentials } from './capabilities.js';
import { LIVE_ADAPTER } from './capabilities.js';

export interface RouteRequest {
  capability: Capability;
  model: string;
  /** `test` keys (svc_test_…) always run on the sandbox. */
  environment: 'live' | 'test';
}

/**
 * Routing per model (DESIGN §1): a model is served by its live adapter when that adapter's
 * credentials are set, else by the sandbox. Domain modules register their implementations
 * (`register('video', 'gemini-video', adapter)`) and resolve one per request.
 */
export class ProviderRegistry {
  private readonly adapters = new Map<string, unknown>();

  constructor(private readonly credentials: ProviderCredentials) {}

  register<T>(capability: Capability, adapter: AdapterName, implementation: T): void {
    this.adapters.set(`${capability}/${adapter}`, implementation);
  }

  /** The adapter name that serves this request. */
  route(request: RouteRequest): AdapterName {
    if (request.environment === 'test') return 'sandbox';
    const live = LIVE_ADAPTER[request.capability];
    return this.credentials[live.credential] ? live.adapter : 'sandbox';
  }

  resolve<T>(request: RouteRequest): { adapter: AdapterName; provider: T } {
    const adapter = this.route(request);
    const provider = this.adapters.get(`${request.capability}/${adapter}`);
    if (provider === undefined) throw new Error(`no ${adapter} adapter registered for ${request.capability}`);
    return { adapter, provider: provider as T };
  }

  /** Whether a live adapter is configured for the capability (e.g. to answer 503 early). */
  isLive(capability: Capability): boolean {
    return this.credentials[LIVE_ADAPTER[capability].credential];
  }
}
