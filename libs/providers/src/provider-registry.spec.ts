import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderRegistry } from './provider-registry.js';

describe('ProviderRegistry', () => {
  const sandbox = { name: 'sandbox' };
  const gemini = { name: 'gemini' };

  it('routes to the sandbox when the live adapter has no credentials', () => {
    const registry = new ProviderRegistry({ gemini: false, elevenlabs: false, kling: false });
    registry.register('text', 'sandbox', sandbox);
    registry.register('text', 'gemini', gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, sandbox);
  });

  it('routes live keys to the live adapter when credentials are set, test keys to the sandbox', () => {
    const registry = new ProviderRegistry({ gemini: true, elevenlabs: false, kling: false });
    registry.register('text', 'sandbox', sandbox);
    registry.register('text', 'gemini', gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, gemini);
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'test' }).provider, sandbox);
    assert.equal(registry.route({ capability: 'speech', model: 'voice_v3', environment: 'live' }), 'sandbox');
  });

  it('fails loudly when an adapter was never registered', () => {
    const registry = new ProviderRegistry({ gemini: true, elevenlabs: false, kling: false });
    assert.throws(() => registry.resolve({ capability: 'video', model: 'm', environment: 'live' }), /no gemini-video adapter/);
  });
});
