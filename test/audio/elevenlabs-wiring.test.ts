/**
 * The live adapter as the app builds it: AudioAdaptersModule reads ELEVENLABS_API_KEY and
 * ELEVENLABS_BASE_URL, the registry finds the adapter at boot and routes live keys' audio models
 * to it (test keys to the sandbox), and what it sends carries the configured key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AudioProvider, ElevenLabsAudioAdapter, ProviderRegistry } from '../../libs/providers/index.js';
import { AudioAdaptersModule } from '../../src/modules/audio/audio-adapters.module.js';
import { FakeElevenLabsServer } from '../fakes/elevenlabs-server.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

describe('the elevenlabs adapter wired into the app', () => {
  let fake: FakeElevenLabsServer;
  let t: TestApp;

  before(async () => {
    fake = await new FakeElevenLabsServer().start();
    t = await bootTestApp({ label: 'elevenwire', imports: [AudioAdaptersModule], env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.baseUrl } });
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  it('serves every audio model for live keys, speaking to the configured upstream with the configured key', async () => {
    const registry = t.app.get(ProviderRegistry);
    for (const model of ['voice_v3', 'voice_v4', 'voice_v4_turbo']) {
      const live = registry.resolve<AudioProvider>({ capability: 'audio', model, environment: 'live' });
      assert.equal(live.adapter, 'elevenlabs');
      assert.equal(live.provider, t.app.get(ElevenLabsAudioAdapter));
      assert.equal(registry.resolve<AudioProvider>({ capability: 'audio', model, environment: 'test' }).adapter, 'sandbox');
    }
    const { provider } = registry.resolve<AudioProvider>({ capability: 'audio', model: 'voice_v4', environment: 'live' });
    const outcome = await provider.synthesize({
      taskId: 'audio:00000000-0000-4000-8000-0000000000aa',
      model: 'voice_v4',
      mode: 'text_to_speech',
      inputs: [{ text: 'Wired up.', voiceId: 'JBFqnCBsd6RMkjVDRZzb' }],
      outputFormat: 'mp3_44100_128',
    });
    assert.equal(outcome.kind, 'succeeded');
    assert.equal(outcome.kind === 'succeeded' && outcome.billableCharacters, 'Wired up.'.length);
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.headers['xi-api-key'], fake.apiKey);
    assert.equal(sent.body.model_id, 'eleven_v3');
    assert.equal((await provider.getVoice('JBFqnCBsd6RMkjVDRZzb'))?.category, 'premade');
  });
});
