import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProviderCredentials } from './capabilities.js';
import { NoLiveAdapterError, ProviderRegistry } from './provider-registry.js';

const NO_CREDENTIALS: ProviderCredentials = { gemini: false, elevenlabs: false, kling: false };
const GEMINI_ONLY: ProviderCredentials = { gemini: true, elevenlabs: false, kling: false };
const DEVELOPMENT = { sandboxForLiveKeys: true };
const PRODUCTION = { sandboxForLiveKeys: false };

describe('ProviderRegistry', () => {
  const sandbox = { name: 'sandbox' };
  const gemini = { name: 'gemini' };

  it('routes to the sandbox when the live adapter has no credentials', () => {
    const registry = new ProviderRegistry(NO_CREDENTIALS, DEVELOPMENT);
    registry.register('text', 'sandbox', sandbox);
    registry.register('text', 'gemini', gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, sandbox);
  });

  it('routes live keys to the live adapter when credentials are set, test keys to the sandbox', () => {
    const registry = new ProviderRegistry(GEMINI_ONLY, DEVELOPMENT);
    registry.register('text', 'sandbox', sandbox);
    registry.register('text', 'gemini', gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'test' }).provider, sandbox);
    assert.equal(registry.route({ capability: 'speech', model: 'voice_v3', environment: 'live' }), 'sandbox');
  });

  it('fails loudly when an adapter was never registered', () => {
    const registry = new ProviderRegistry(GEMINI_ONLY, DEVELOPMENT);
    assert.throws(() => registry.resolve({ capability: 'video', model: 'm', environment: 'live' }), /no gemini-video adapter/);
  });

  describe('when the sandbox is refused to live keys (production)', () => {
    it('refuses a live key on every capability whose live adapter has no credentials', () => {
      const registry = new ProviderRegistry(NO_CREDENTIALS, PRODUCTION);
      registry.register('text', 'sandbox', sandbox);
      for (const [capability, model] of [['text', 'vendor-3.8-flash'], ['image', 'vendor-image'], ['video', 'vendor-omni-flash-preview'], ['speech', 'voice_v3'], ['alternate-video', 'kling-v2-6']] as const) {
        assert.throws(
          () => registry.route({ capability, model, environment: 'live' }),
          (error: unknown) => error instanceof NoLiveAdapterError && error.capability === capability && error.model === model,
          capability,
        );
      }
      assert.throws(() => registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }), NoLiveAdapterError);
    });

    it('keeps the sandbox for test keys', () => {
      const registry = new ProviderRegistry(NO_CREDENTIALS, PRODUCTION);
      registry.register('text', 'sandbox', sandbox);
      assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'test' }).provider, sandbox);
    });

    it('still serves live keys through a configured live adapter', () => {
      const registry = new ProviderRegistry(GEMINI_ONLY, PRODUCTION);
      registry.register('text', 'sandbox', sandbox);
      registry.register('text', 'gemini', gemini);
      assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, gemini);
      assert.equal(registry.route({ capability: 'video', model: 'vendor-omni-flash-preview', environment: 'live' }), 'gemini-video');
      assert.throws(() => registry.route({ capability: 'speech', model: 'voice_v3', environment: 'live' }), NoLiveAdapterError);
    });
  });
});
