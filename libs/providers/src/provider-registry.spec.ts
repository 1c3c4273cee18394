import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProviderAdapter } from './capabilities.js';
import { NoLiveAdapterError, parseProviderRoutes, ProviderRegistry, ProviderSetupError } from './provider-registry.js';

const DEVELOPMENT = { sandboxForLiveKeys: true };
const PRODUCTION = { sandboxForLiveKeys: false };
const NO_ROUTES = parseProviderRoutes(undefined);

const TEXT_MODELS = ['vendor-3.8-flash', 'vendor-3.7-flash'];
const VIDEO_MODELS = ['vendor-omni-1.1-flash-preview', 'vendor-omni-flash-preview'];

function adapter(name: string, models: string[], options: { live?: boolean; credentialled?: boolean } = {}): ProviderAdapter {
  const live = options.live ?? name !== 'sandbox';
  return { name, live, models, credentialled: () => options.credentialled ?? !live };
}

/** Today's adapters: gemini (text), gemini-video (video) and both sandboxes, credentialled or not. */
function registry(options: { gemini: boolean; routes?: string; policy?: { sandboxForLiveKeys: boolean } }): ProviderRegistry {
  const registry = new ProviderRegistry(parseProviderRoutes(options.routes), options.policy ?? DEVELOPMENT);
  registry.register(adapter('sandbox', TEXT_MODELS), { capability: 'text' });
  registry.register(adapter('gemini', TEXT_MODELS, { credentialled: options.gemini }), { capability: 'text' });
  registry.register(adapter('sandbox', VIDEO_MODELS), { capability: 'video' });
  registry.register(adapter('gemini-video', VIDEO_MODELS, { credentialled: options.gemini }), { capability: 'video' });
  registry.validateRoutes();
  return registry;
}

describe('ProviderRegistry', () => {
  it('routes to the sandbox when the live adapter has no credentials', () => {
    const registry = new ProviderRegistry(NO_ROUTES, DEVELOPMENT);
    const sandbox = adapter('sandbox', TEXT_MODELS);
    registry.register(sandbox, { capability: 'text' });
    registry.register(adapter('gemini', TEXT_MODELS, { credentialled: false }), { capability: 'text' });
    assert.equal(registry.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider, sandbox);
  });

  it('routes live keys to the live adapter when credentials are set, test keys to the sandbox', () => {
    const routes = registry({ gemini: true });
    assert.equal(routes.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider.name, 'gemini');
    assert.equal(routes.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'test' }).provider.name, 'sandbox');
    assert.equal(routes.route({ capability: 'speech', model: 'voice_v3', environment: 'live' }), 'sandbox');
  });

  it('fails loudly when an adapter was never registered', () => {
    const registry = new ProviderRegistry(NO_ROUTES, DEVELOPMENT);
    assert.throws(() => registry.resolve({ capability: 'video', model: 'm', environment: 'live' }), /no sandbox adapter registered for video/);
    assert.throws(() => registry.get('video', 'gemini-video'), /no gemini-video adapter registered for video/);
  });

  it('looks an adapter up by name within its capability (the worker keeps the task’s adapter)', () => {
    const routes = registry({ gemini: false });
    assert.equal(routes.get('video', 'gemini-video').name, 'gemini-video');
    assert.throws(() => routes.get('text', 'gemini-video'), /no gemini-video adapter registered for text/);
  });

  describe('registration', () => {
    it('refuses a second adapter with the same capability and name', () => {
      const registry = new ProviderRegistry(NO_ROUTES, DEVELOPMENT);
      registry.register(adapter('gemini-video', VIDEO_MODELS), { capability: 'video' });
      assert.throws(() => registry.register(adapter('gemini-video', VIDEO_MODELS), { capability: 'video' }), (error: unknown) => {
        assert.ok(error instanceof ProviderSetupError);
        assert.match(error.message, /two video adapters are named gemini-video; mark the replacement with overrides: true/);
        return true;
      });
      // The same name under another capability is another adapter.
      registry.register(adapter('gemini-video', ['x']), { capability: 'image' });
    });

    it('lets an adapter that says it overrides replace one, in whichever order they register', () => {
      for (const order of ['original first', 'override first']) {
        const registry = new ProviderRegistry(NO_ROUTES, DEVELOPMENT);
        const original = adapter('sandbox', VIDEO_MODELS);
        const replacement = adapter('sandbox', VIDEO_MODELS);
        if (order === 'original first') {
          registry.register(original, { capability: 'video' });
          registry.register(replacement, { capability: 'video', overrides: true });
        } else {
          registry.register(replacement, { capability: 'video', overrides: true });
          registry.register(original, { capability: 'video' });
        }
        assert.equal(registry.get('video', 'sandbox'), replacement, order);
        assert.equal(registry.resolve({ capability: 'video', model: VIDEO_MODELS[0]!, environment: 'test' }).provider, replacement, order);
      }
    });

    it('refuses two overrides of the same adapter', () => {
      const registry = new ProviderRegistry(NO_ROUTES, DEVELOPMENT);
      registry.register(adapter('sandbox', VIDEO_MODELS), { capability: 'video', overrides: true });
      assert.throws(() => registry.register(adapter('sandbox', VIDEO_MODELS), { capability: 'video', overrides: true }), ProviderSetupError);
    });
  });

  describe('PROVIDER_ROUTES', () => {
    it('parses model:adapter pairs separated by commas or whitespace', () => {
      assert.deepEqual(
        [...parseProviderRoutes(' vendor-omni-1.1-flash-preview:gemini-video,vendor-3.8-flash:sandbox\n vendor-3.7-flash:gemini ')],
        [
          ['vendor-omni-1.1-flash-preview', 'gemini-video'],
          ['vendor-3.8-flash', 'sandbox'],
          ['vendor-3.7-flash', 'gemini'],
        ],
      );
      assert.equal(parseProviderRoutes('').size, 0);
    });

    it('refuses malformed entries and a model routed twice, naming them', () => {
      assert.throws(() => parseProviderRoutes('vendor-3.8-flash'), /PROVIDER_ROUTES: "vendor-3.8-flash" is not model:adapter/);
      assert.throws(() => parseProviderRoutes('vendor-3.8-flash:'), /"vendor-3.8-flash:" is not model:adapter/);
      assert.throws(() => parseProviderRoutes(':gemini'), /":gemini" is not model:adapter/);
      assert.throws(() => parseProviderRoutes('vendor-3.8-flash:gemini vendor-3.8-flash:sandbox'), /PROVIDER_ROUTES: vendor-3.8-flash is routed twice/);
    });

    it('stops the boot on an unknown adapter, an unknown model, or an adapter that does not serve the model', () => {
      assert.throws(() => registry({ gemini: true, routes: 'vendor-3.8-flash:openai' }), /PROVIDER_ROUTES: vendor-3.8-flash is routed to unknown adapter openai \(adapters: gemini, gemini-video, sandbox\)/);
      assert.throws(() => registry({ gemini: true, routes: 'vendor-9-ultra:gemini' }), /PROVIDER_ROUTES: unknown model vendor-9-ultra/);
      assert.throws(() => registry({ gemini: true, routes: 'vendor-3.8-flash:gemini-video' }), /PROVIDER_ROUTES: adapter gemini-video does not serve vendor-3.8-flash/);
    });

    it('routes per model: a routed model goes to its adapter, the others keep the default rule', () => {
      const routes = new ProviderRegistry(parseProviderRoutes('vendor-omni-1.1-flash-preview:acme-video'), DEVELOPMENT);
      routes.register(adapter('sandbox', VIDEO_MODELS), { capability: 'video' });
      routes.register(adapter('gemini-video', VIDEO_MODELS, { credentialled: true }), { capability: 'video' });
      routes.register(adapter('acme-video', ['vendor-omni-1.1-flash-preview'], { credentialled: true }), { capability: 'video' });
      routes.validateRoutes();
      assert.equal(routes.route({ capability: 'video', model: 'vendor-omni-1.1-flash-preview', environment: 'live' }), 'acme-video');
      assert.equal(routes.route({ capability: 'video', model: 'vendor-omni-flash-preview', environment: 'live' }), 'gemini-video');
      assert.equal(routes.route({ capability: 'video', model: 'vendor-omni-1.1-flash-preview', environment: 'test' }), 'sandbox');
    });

    it('serves a routed model by the sandbox when its adapter has no credentials (outside production)', () => {
      const routes = registry({ gemini: false, routes: 'vendor-omni-1.1-flash-preview:gemini-video' });
      assert.equal(routes.route({ capability: 'video', model: 'vendor-omni-1.1-flash-preview', environment: 'live' }), 'sandbox');
    });

    it('can route a model to the sandbox even when a live adapter is credentialled', () => {
      const routes = registry({ gemini: true, routes: 'vendor-3.7-flash:sandbox' });
      assert.equal(routes.route({ capability: 'text', model: 'vendor-3.7-flash', environment: 'live' }), 'sandbox');
      assert.equal(routes.route({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }), 'gemini');
    });
  });

  describe('when the sandbox is refused to live keys (production)', () => {
    it('refuses a live key on every capability whose live adapter has no credentials', () => {
      const routes = registry({ gemini: false, policy: PRODUCTION });
      for (const [capability, model] of [['text', 'vendor-3.8-flash'], ['image', 'vendor-image'], ['video', 'vendor-omni-flash-preview'], ['speech', 'voice_v3'], ['alternate-video', 'kling-v2-6']] as const) {
        assert.throws(
          () => routes.route({ capability, model, environment: 'live' }),
          (error: unknown) => error instanceof NoLiveAdapterError && error.capability === capability && error.model === model,
          capability,
        );
      }
      assert.throws(() => routes.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }), NoLiveAdapterError);
    });

    it('refuses a live key whose model is routed to the sandbox or to an adapter without credentials', () => {
      assert.throws(() => registry({ gemini: true, policy: PRODUCTION, routes: 'vendor-3.7-flash:sandbox' }).route({ capability: 'text', model: 'vendor-3.7-flash', environment: 'live' }), NoLiveAdapterError);
      assert.throws(
        () => registry({ gemini: false, policy: PRODUCTION, routes: 'vendor-3.7-flash:gemini' }).route({ capability: 'text', model: 'vendor-3.7-flash', environment: 'live' }),
        NoLiveAdapterError,
      );
    });

    it('keeps the sandbox for test keys', () => {
      const routes = registry({ gemini: false, policy: PRODUCTION, routes: 'vendor-3.7-flash:gemini' });
      assert.equal(routes.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'test' }).provider.name, 'sandbox');
      assert.equal(routes.resolve({ capability: 'text', model: 'vendor-3.7-flash', environment: 'test' }).provider.name, 'sandbox');
    });

    it('still serves live keys through a configured live adapter', () => {
      const routes = registry({ gemini: true, policy: PRODUCTION });
      assert.equal(routes.resolve({ capability: 'text', model: 'vendor-3.8-flash', environment: 'live' }).provider.name, 'gemini');
      assert.equal(routes.route({ capability: 'video', model: 'vendor-omni-flash-preview', environment: 'live' }), 'gemini-video');
      assert.throws(() => routes.route({ capability: 'speech', model: 'voice_v3', environment: 'live' }), NoLiveAdapterError);
    });
  });
});
