import type { AdapterName, Capability, ProviderCredentials } from './capabilities.js';
import { LIVE_ADAPTER } from './capabilities.js';

export interface RouteRequest {
  capability: Capability;
  model: string;
  /** `test` keys (svc_test_…) always run on the sandbox. */
  environment: 'live' | 'test';
}

export interface RoutingPolicy {
  /**
   * Whether a live key may be served by the sandbox when the model's live adapter has no
   * credentials: yes outside production (the out-of-the-box default), never in production,
   * where live money must not buy sandbox output.
   */
  sandboxForLiveKeys: boolean;
}

/**
 * A live key asked for a model that only the sandbox could serve, and the policy forbids it.
 * Each domain answers it with its own 503 `<domain>.unavailable`, before any hold.
 */
export class NoLiveAdapterError extends Error {
  constructor(
    readonly capability: Capability,
    readonly model: string,
  ) {
    super(`no live ${LIVE_ADAPTER[capability].adapter} adapter is configured for ${capability} model ${model}`);
    this.name = 'NoLiveAdapterError';
  }
}

/**
 * Routing per model (DESIGN §1): a model is served by its live adapter when that adapter's
 * credentials are set, else by the sandbox — unless the policy refuses the sandbox to live
 * keys (production), which then get NoLiveAdapterError. Domain modules register their
 * implementations (`register('video', 'gemini-video', adapter)`) and resolve one per request.
 */
export class ProviderRegistry {
  private readonly adapters = new Map<string, unknown>();

  constructor(
    private readonly credentials: ProviderCredentials,
    private readonly policy: RoutingPolicy,
  ) {}

  register<T>(capability: Capability, adapter: AdapterName, implementation: T): void {
    this.adapters.set(`${capability}/${adapter}`, implementation);
  }

  /** The adapter name that serves this request; throws NoLiveAdapterError when none may. */
  route(request: RouteRequest): AdapterName {
    if (request.environment === 'test') return 'sandbox';
    if (this.isLive(request.capability)) return LIVE_ADAPTER[request.capability].adapter;
    if (!this.policy.sandboxForLiveKeys) throw new NoLiveAdapterError(request.capability, request.model);
    return 'sandbox';
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
