import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { VoiceResolver } from '../../src/modules/audio/index.js';
import { FakeElevenLabsServer } from '../fakes/elevenlabs-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { assertError, savedVoiceRows, usableVoices, walletFigures } from './voices-helpers.js';

interface Voice {
  id: string;
  name: string;
  previewUrl?: string;
  category: string;
  alias?: string | null;
}

/** A live key with ElevenLabs credentials: the voice routes read the upstream's catalogue (the wire-format fake). */
describe('voices of the live adapter (elevenlabs, through its fake)', () => {
  let fake: FakeElevenLabsServer;
  let t: TestApp;
  let live: TestAccount;
  let sandboxKey: TestAccount;

  before(async () => {
    fake = await new FakeElevenLabsServer().start();
    t = await bootTestApp({ label: 'voices-live', env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.baseUrl } });
    live = await createAccount(t, { creditUsd: 5 });
    sandboxKey = await createAccount(t, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  const library = async (key: TestAccount, query = ''): Promise<{ voices: Voice[]; hasMore: boolean; totalCount: number }> => {
    const answer = await t.request(`/v1/audio/voice-library${query}`, { key: key.key });
    assert.equal(answer.status, 200, await answer.clone().text());
    return (await answer.json()) as { voices: Voice[]; hasMore: boolean; totalCount: number };
  };

  it('lists the upstream library for a live key, keeping its preview links and leaving out custom-rate voices', async () => {
    const before = await walletFigures(t, live);
    const first = await library(live);
    const standard = fake.library.filter((voice) => voice.rate === undefined && voice.fiat_rate === undefined);
    const premade = fake.account.filter((voice) => voice.category === 'premade');
    assert.equal(first.voices.length, 30);
    assert.equal(first.hasMore, true);
    assert.equal(first.totalCount, premade.length + standard.length);
    // The official premade voices come first (the shared library leaves them out), then the library.
    assert.deepEqual(first.voices.slice(0, premade.length).map((voice) => [voice.id, voice.category]), premade.map((voice) => [voice.voice_id, 'premade']));
    const byId = new Map([...fake.library, ...premade].map((voice) => [voice.voice_id, voice]));
    for (const voice of first.voices) {
      const upstream = byId.get(voice.id);
      assert.ok(upstream, `${voice.id} comes from the upstream library`);
      assert.equal(voice.previewUrl, upstream.preview_url);
      assert.ok(standard.includes(upstream as (typeof standard)[number]) || premade.includes(upstream as (typeof premade)[number]));
    }
    assert.ok(fake.requestsTo('/v1/shared-voices').length > 0);
    const [stored] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM media_object WHERE key LIKE 'voice-previews/%'`);
    assert.equal(Number(stored!.n), 0, 'live samples are not copied');
    assert.deepEqual(await walletFigures(t, live), before);
  });

  it("search by a voice's exact official id finds it, premade voices included (the upstream's library search leaves them out)", async () => {
    const rachel = fake.account.find((voice) => voice.name === 'Rachel' && voice.category === 'premade')!;
    const found = await library(live, `?search=${rachel.voice_id}`);
    assert.deepEqual([found.voices.map((voice) => [voice.id, voice.category]), found.totalCount, found.hasMore], [[[rachel.voice_id, 'premade']], 1, false]);
    const shared = fake.library.find((voice) => voice.rate === undefined && voice.fiat_rate === undefined)!;
    assert.deepEqual((await library(live, `?search=${shared.voice_id}`)).voices.map((voice) => voice.id), [shared.voice_id]);
    // The account's own clone is no official voice: not found by its id.
    const clone = fake.account.find((voice) => voice.category === 'cloned')!;
    assert.equal((await library(live, `?search=${clone.voice_id}`)).voices.some((voice) => voice.id === clone.voice_id), false);
  });

  it('a svc_test_ key on the same app keeps the sandbox catalogue', async () => {
    const page = await library(sandboxKey);
    assert.equal(page.totalCount, usableVoices().length);
    assert.ok(page.voices.every((voice) => !voice.id.startsWith('SV')));
  });

  it('imports a premade voice and refuses the account’s own clone and a custom-rate library voice', async () => {
    const rachel = fake.account.find((voice) => voice.name === 'Rachel')!;
    const answer = await t.request('/v1/audio/voices/import', { method: 'POST', key: live.key, json: { voiceId: rachel.voice_id, alias: 'rachel' } });
    assert.equal(answer.status, 200, await answer.clone().text());
    const saved = (await answer.json()) as Voice;
    assert.deepEqual([saved.id, saved.category, saved.alias, saved.previewUrl], [rachel.voice_id, 'premade', 'rachel', rachel.preview_url]);
    const clone = fake.account.find((voice) => voice.category === 'cloned')!;
    const customRate = fake.library.find((voice) => voice.fiat_rate !== undefined)!;
    for (const voiceId of [clone.voice_id, customRate.voice_id]) {
      await assertError(await t.request('/v1/audio/voices/import', { method: 'POST', key: live.key, json: { voiceId } }), 400, 'audio.voice_unsupported');
    }
    assert.deepEqual((await savedVoiceRows(t, live)).map((row) => row.voice_id), [rachel.voice_id]);
  });

  it('resolves a live alias and official ids through the live catalogue', async () => {
    const resolver = t.app.get(VoiceResolver);
    const owner = { apiKeyId: live.keyId, environment: 'live' as const };
    const rachel = fake.account.find((voice) => voice.name === 'Rachel')!;
    assert.equal(await resolver.resolve(owner, 'rachel', 'voice_v4'), rachel.voice_id);
    assert.equal(await resolver.resolve(owner, fake.library[0]!.voice_id, 'voice_v3'), fake.library[0]!.voice_id);
    assert.equal(await resolver.resolve(owner, fake.account.find((voice) => voice.category === 'cloned')!.voice_id, 'voice_v4'), null);
  });
});
