import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AudioProvider, ProviderRegistry } from '../../libs/providers/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { PRODUCTION_ENV } from '../support/production-env.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { assertError, savedVoiceRows, usableVoices, walletFigures } from './voices-helpers.js';

describe('voices when the catalogue cannot answer', () => {
  let t: TestApp;
  let account: TestAccount;
  let provider: AudioProvider;

  before(async () => {
    t = await bootTestApp({ label: 'voices-unavailable' });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
    provider = t.app.get(ProviderRegistry).get<AudioProvider>('audio', 'sandbox');
  });
  after(async () => {
    await t.close();
  });

  it('a sample that cannot be made leaves the voice without previewUrl (200); the next request makes it', async () => {
    const original = provider.previewSample.bind(provider);
    provider.previewSample = () => Promise.reject(new Error('encoder exploded'));
    try {
      const answer = await t.request('/v1/audio/voice-library', { key: account.key });
      assert.equal(answer.status, 200);
      const page = (await answer.json()) as { voices: Array<{ id: string; previewUrl?: string }> };
      assert.equal(page.voices.length, 30);
      assert.ok(page.voices.every((voice) => voice.previewUrl === undefined));
    } finally {
      provider.previewSample = original;
    }
    const again = (await (await t.request('/v1/audio/voice-library', { key: account.key })).json()) as { voices: Array<{ previewUrl?: string }> };
    assert.ok(again.voices.every((voice) => typeof voice.previewUrl === 'string'));
  });

  it('a catalogue that throws answers 503 audio.unavailable on the library and on import, and changes nothing', async () => {
    const [list, get] = [provider.listVoices.bind(provider), provider.getVoice.bind(provider)];
    provider.listVoices = () => Promise.reject(new Error('upstream down'));
    provider.getVoice = () => Promise.reject(new Error('upstream down'));
    try {
      const before = await walletFigures(t, account);
      await assertError(await t.request('/v1/audio/voice-library', { key: account.key }), 503, 'audio.unavailable');
      await assertError(await t.request(`/v1/audio/voice-library?voiceId=${usableVoices()[0]!.id}`, { key: account.key }), 503, 'audio.unavailable');
      const imported = await t.request('/v1/audio/voices/import', { method: 'POST', key: account.key, json: { voiceId: usableVoices()[0]!.id } });
      await assertError(imported, 503, 'audio.unavailable');
      assert.deepEqual(await savedVoiceRows(t, account), []);
      assert.deepEqual(await walletFigures(t, account), before);
    } finally {
      provider.listVoices = list;
      provider.getVoice = get;
    }
  });
});

describe('voices in production with no live audio adapter', () => {
  let t: TestApp;
  let live: TestAccount;
  let sandboxKey: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'voices-prod', env: PRODUCTION_ENV });
    assert.equal(t.config.isProduction, true);
    live = await createAccount(t, { creditUsd: 5 });
    sandboxKey = await createAccount(t, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    await t.close();
  });

  it('a live key gets 503 audio.unavailable (never the sandbox catalogue) and nothing changes', async () => {
    const before = await walletFigures(t, live);
    await assertError(await t.request('/v1/audio/voice-library', { key: live.key }), 503, 'audio.unavailable');
    await assertError(await t.request('/v1/audio/voices/import', { method: 'POST', key: live.key, json: { voiceId: usableVoices()[0]!.id } }), 503, 'audio.unavailable');
    assert.deepEqual(await savedVoiceRows(t, live), []);
    assert.deepEqual(await walletFigures(t, live), before);
  });

  it('a svc_test_ key keeps the sandbox catalogue', async () => {
    const answer = await t.request('/v1/audio/voice-library', { key: sandboxKey.key });
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as { totalCount: number }).totalCount, usableVoices().length);
  });
});
