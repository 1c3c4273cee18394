import { type AdapterRegistration, type Capability, type ProviderAdapter, SANDBOX_ADAPTER } from './capabilities.js';

export interface RouteRequest {
  capability: Capability;
  model: string;
  /** `test` keys (svc_test_…) always run on the sandbox. */
  environment: 'live' | 'test';
}

export interface RoutingPolicy {
  /**
   * Whether a live key may be served by the sandbox when the model's adapter is not live and
   * credentialled: yes outside production (the out-of-the-box default), never in production,
   * where live money must not buy sandbox output.
   */
  sandboxForLiveKeys: boolean;
}

/** PROVIDER_ROUTES parsed: model id → adapter name. */
export type ProviderRoutes = ReadonlyMap<string, string>;

/**
 * A live key asked for a model that only the sandbox could serve, and the policy forbids it.
 * Each domain answers it with its own 503 `<domain>.unavailable`, before any hold.
 */
export class NoLiveAdapterError extends Error {
  constructor(
    readonly capability: Capability,
    readonly model: string,
  ) {
    super(`no live adapter is configured for ${capability} model ${model}`);
    this.name = 'NoLiveAdapterError';
  }
}

/** A boot-time mistake in the adapters or in PROVIDER_ROUTES; the message names the culprit. */
export class ProviderSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderSetupError';
  }
}

/**
 * `model:adapter` pairs separated by commas or whitespace, e.g.
 * `vendor-omni-1.1-flash-preview:gemini-video, vendor-3.8-flash:gemini`.
 */
export function parseProviderRoutes(value: string | undefined): ProviderRoutes {
  const routes = new Map<string, string>();
  for (const entry of (value ?? '').split(/[\s,]+/).filter(Boolean)) {
    const colon = entry.lastIndexOf(':');
    const model = entry.slice(0, colon);
    const adapter = entry.slice(colon + 1);
    if (colon < 0 || model === '' || adapter === '') throw new ProviderSetupError(`PROVIDER_ROUTES: "${entry}" is not model:adapter`);
    if (routes.has(model)) throw new ProviderSetupError(`PROVIDER_ROUTES: ${model} is routed twice`);
    routes.set(model, adapter);
  }
  return routes;
}

interface Registered {
  adapter: ProviderAdapter;
  overrides: boolean;
}

/**
 * Every adapter of every capability, and routing per model (DESIGN §1). A model is served by
 * the adapter PROVIDER_ROUTES names for it, else by the first registered live adapter of its
 * capability that serves it with credentials; when that adapter is not live and credentialled,
 * the sandbox serves it — unless the policy refuses the sandbox to live keys (production),
 * which then get NoLiveAdapterError. `svc_test_` keys always get the sandbox.
 *
 * Adapters are registered once at boot (ProvidersModule finds them in the DI container); the
 * worker looks a task's adapter up by name with `get`, since a task keeps the adapter chosen
 * at creation.
 */
export class ProviderRegistry {
  private readonly byCapability = new Map<Capability, Map<string, Registered>>();

  constructor(
    private readonly routes: ProviderRoutes,
    private readonly policy: RoutingPolicy,
  ) {}

  /** A second adapter under the same capability and name throws unless one of the two overrides. */
  register(adapter: ProviderAdapter, registration: AdapterRegistration): void {
    const { capability, overrides = false } = registration;
    const adapters = this.byCapability.get(capability) ?? new Map<string, Registered>();
    this.byCapability.set(capability, adapters);
    const existing = adapters.get(adapter.name);
    // Registration order follows module order, so an override may arrive before what it replaces.
    if (existing === undefined || (overrides && !existing.overrides)) adapters.set(adapter.name, { adapter, overrides });
    else if (!existing.overrides || overrides) {
      throw new ProviderSetupError(`two ${capability} adapters are named ${adapter.name}; mark the replacement with overrides: true`);
    }
  }

  /** Checks PROVIDER_ROUTES against the registered adapters; run once every adapter is registered. */
  validateRoutes(): void {
    const all = [...this.byCapability.values()].flatMap((adapters) => [...adapters.values()].map((r) => r.adapter));
    for (const [model, name] of this.routes) {
      const named = all.filter((adapter) => adapter.name === name);
      if (named.length === 0) {
        const known = [...new Set(all.map((adapter) => adapter.name))].sort().join(', ');
        throw new ProviderSetupError(`PROVIDER_ROUTES: ${model} is routed to unknown adapter ${name} (adapters: ${known})`);
      }
      if (!all.some((adapter) => adapter.models.includes(model))) throw new ProviderSetupError(`PROVIDER_ROUTES: unknown model ${model}`);
      if (!named.some((adapter) => adapter.models.includes(model))) {
        throw new ProviderSetupError(`PROVIDER_ROUTES: adapter ${name} does not serve ${model} (it serves ${named.flatMap((a) => a.models).join(', ')})`);
      }
    }
  }

  /** The adapter name that serves this request; throws NoLiveAdapterError when none may. */
  route(request: RouteRequest): string {
    if (request.environment === 'test') return SANDBOX_ADAPTER;
    const adapters = this.byCapability.get(request.capability);
    const routed = this.routes.get(request.model);
    const chosen =
      routed === undefined
        ? [...(adapters?.values() ?? [])].map((r) => r.adapter).find((a) => a.live && a.credentialled() && a.models.includes(request.model))
        : adapters?.get(routed)?.adapter;
    if (chosen?.live && chosen.credentialled()) return chosen.name;
    if (!this.policy.sandboxForLiveKeys) throw new NoLiveAdapterError(request.capability, request.model);
    return SANDBOX_ADAPTER;
  }

  resolve<T extends ProviderAdapter>(request: RouteRequest): { adapter: string; provider: T } {
    const adapter = this.route(request);
    return { adapter, provider: this.get<T>(request.capability, adapter) };
  }

  /** The adapter registered under this name (a task's stored adapter, for the worker). */
  get<T extends ProviderAdapter>(capability: Capability, name: string): T {
    const registered = this.byCapability.get(capability)?.get(name);
    if (registered === undefined) throw new Error(`no ${name} adapter registered for ${capability}`);
    return registered.adapter as T;
  }
}
