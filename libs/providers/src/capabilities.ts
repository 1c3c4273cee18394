import { SetMetadata } from '@nestjs/common';

/**
 * What the gateway asks of upstreams, one interface per capability (the interfaces live beside
 * each capability's adapters: text/, video/, …). Capabilities and adapter names are plain
 * strings: a new domain or a new upstream is a folder plus registrations, not an edit here.
 */
export type Capability = string;

/** The in-process stand-in every capability has; `svc_test_` keys always get it. */
export const SANDBOX_ADAPTER = 'sandbox';

/** What the registry needs to know of every adapter, whatever its capability. */
export interface ProviderAdapter {
  /** Unique within its capability; PROVIDER_ROUTES and stored tasks name adapters by it. */
  readonly name: string;
  /** True when it calls a real upstream; false for the sandbox. */
  readonly live: boolean;
  /** The public model ids it can serve. */
  readonly models: readonly string[];
  /** Whether its upstream credentials are configured (always true for the sandbox). */
  credentialled(): boolean;
}

export interface AdapterRegistration {
  capability: Capability;
  /** Replaces an adapter registered under the same capability and name instead of failing the boot. */
  overrides?: boolean;
}

export const ADAPTER_REGISTRATION = 'providers:adapter-registration';

/**
 * Marks a class as an adapter of a capability. Any provider of the app whose instance is of a
 * marked class (class or factory provider, from any module) is registered at boot.
 */
export const ProviderAdapterFor = (capability: Capability, options: Omit<AdapterRegistration, 'capability'> = {}): ClassDecorator =>
  SetMetadata<string, AdapterRegistration>(ADAPTER_REGISTRATION, { capability, ...options });
