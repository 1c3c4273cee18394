/**
 * ImageAdaptersModule in the app: the registry finds both image adapters at boot and routes
 * live keys to `gemini-image` when GEMINI_API_KEY is set, test keys always to the sandbox, and
 * live keys to the sandbox when no key is set (outside production).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { IMAGE_CAPABILITY, IMAGE_MODEL_IDS, type ImageProvider, ProviderRegistry } from '../../libs/providers/index.js';
import { ImageAdaptersModule } from '../../src/modules/images/image-adapters.module.js';
import { FAKE_GEMINI_IMAGE_KEY, FakeGeminiImageServer } from '../fakes/gemini-image-server.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

describe('ImageAdaptersModule registered in the app', () => {
  let fake: FakeGeminiImageServer;
  let withKey: TestApp;
  let withoutKey: TestApp;

  before(async () => {
    fake = await new FakeGeminiImageServer().start();
    withKey = await bootTestApp({ label: 'imgroute', imports: [ImageAdaptersModule], env: { GEMINI_API_KEY: FAKE_GEMINI_IMAGE_KEY, GEMINI_BASE_URL: fake.url } });
    withoutKey = await bootTestApp({ label: 'imgroute2', imports: [ImageAdaptersModule] });
  });
  after(async () => {
    await withKey?.close();
    await withoutKey?.close();
    await fake.stop();
  });

  it('routes every image model of a live key to gemini-image, which reaches the upstream', async () => {
    const registry = withKey.app.get(ProviderRegistry);
    for (const model of IMAGE_MODEL_IDS) assert.equal(registry.resolve({ capability: IMAGE_CAPABILITY, model, environment: 'live' }).adapter, 'gemini-image');
    const { provider } = registry.resolve<ImageProvider>({ capability: IMAGE_CAPABILITY, model: 'vendor-3.1-flash-image', environment: 'live' });
    const outcome = await provider.generate({ generationId: 'image:00000000-0000-4000-8000-0000000000b1', model: 'vendor-3.1-flash-image', prompt: 'a kite', references: [], size: '1K', aspectRatio: '1:1' });
    assert.equal(outcome.kind, 'succeeded');
    assert.equal(fake.requests.at(-1)!.path, '/v1beta/models/gemini-3.1-flash-image-preview:generateContent');
  });

  it('gives test keys, and live keys without GEMINI_API_KEY, the sandbox and its real PNG', async () => {
    for (const [app, environment] of [[withKey, 'test'], [withoutKey, 'live'], [withoutKey, 'test']] as const) {
      const { adapter, provider } = app.app.get(ProviderRegistry).resolve<ImageProvider>({ capability: IMAGE_CAPABILITY, model: 'vendor-3-pro-image', environment });
      assert.equal(adapter, 'sandbox');
      const outcome = await provider.generate({ generationId: 'image:00000000-0000-4000-8000-0000000000b2', model: 'vendor-3-pro-image', prompt: 'a kite', references: [], size: '1K', aspectRatio: '16:9' });
      assert.equal(outcome.kind, 'succeeded');
      const metadata = await sharp((outcome as { image: { bytes: Buffer } }).image.bytes).metadata();
      assert.deepEqual([metadata.format, metadata.width, metadata.height], ['png', 1376, 768]);
    }
  });
});
