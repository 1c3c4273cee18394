import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { VoiceResolver } from '../../src/modules/audio/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { customRateVoice, notTurboVoice, privateVoice, removedVoice, UNKNOWN_VOICE_ID, usableVoices } from './voices-helpers.js';

describe('VoiceResolver (AudioVoicesModule)', () => {
  let t: TestApp;
  let resolver: VoiceResolver;
  let owner: TestAccount;
  let other: TestAccount;
  const ownerOf = (account: TestAccount) => ({ apiKeyId: account.keyId, environment: 'test' as const });

  before(async () => {
    t = await bootTestApp({ label: 'voices-resolver' });
    resolver = t.app.get(VoiceResolver);
    owner = await createAccount(t, { environment: 'test' });
    other = await createAccount(t, { environment: 'test' });
    const save = async (account: TestAccount, voiceId: string, alias: string) => {
      const answer = await t.request('/v1/audio/voices/import', { method: 'POST', key: account.key, json: { voiceId, alias } });
      assert.equal(answer.status, 200, await answer.text());
    };
    await save(owner, usableVoices()[0]!.id, 'narrator');
    await save(owner, notTurboVoice().id, 'slow-voice');
    await save(other, usableVoices()[1]!.id, 'theirs');
  });
  after(async () => {
    await t.close();
  });

  /** [name, reference, model, expected official id or null] */
  const CASES: Array<[string, () => string, 'voice_v3' | 'voice_v4' | 'voice_v4_turbo', () => string | null]> = [
    ['an alias of this key', () => 'narrator', 'voice_v4', () => usableVoices()[0]!.id],
    ['an official id of a usable voice (never saved)', () => usableVoices()[2]!.id, 'voice_v3', () => usableVoices()[2]!.id],
    ['an official id the key also saved', () => usableVoices()[0]!.id, 'voice_v4_turbo', () => usableVoices()[0]!.id],
    ['an alias of another key', () => 'theirs', 'voice_v4', () => null],
    ['a private voice', () => privateVoice().id, 'voice_v4', () => null],
    ['a removed voice', () => removedVoice().id, 'voice_v4', () => null],
    ['a custom-rate voice', () => customRateVoice().id, 'voice_v4', () => null],
    ['a voice that does not speak the model', () => notTurboVoice().id, 'voice_v4_turbo', () => null],
    ['the same voice with a model it speaks', () => notTurboVoice().id, 'voice_v4', () => notTurboVoice().id],
    ['an alias whose voice does not speak the model', () => 'slow-voice', 'voice_v4_turbo', () => null],
    ['an unknown official id', () => UNKNOWN_VOICE_ID, 'voice_v4', () => null],
    ['an unknown alias', () => 'nobody', 'voice_v4', () => null],
    ['an empty string', () => '', 'voice_v4', () => null],
    ['something that is neither', () => 'Not An Id!', 'voice_v4', () => null],
    ['a very long string', () => 'a'.repeat(10_000), 'voice_v4', () => null],
  ];
  for (const [name, reference, model, expected] of CASES) {
    it(`${name} → ${expected() === null ? 'null' : 'its official id'}`, async () => {
      assert.equal(await resolver.resolve(ownerOf(owner), reference(), model), expected());
    });
  }

  it('the other key resolves its own alias, and not the owner’s', async () => {
    assert.equal(await resolver.resolve(ownerOf(other), 'theirs', 'voice_v4'), usableVoices()[1]!.id);
    assert.equal(await resolver.resolve(ownerOf(other), 'narrator', 'voice_v4'), null);
  });

  it('a removed binding no longer resolves', async () => {
    const account = await createAccount(t, { environment: 'test' });
    const voice = usableVoices()[3]!;
    const saved = await t.request('/v1/audio/voices/import', { method: 'POST', key: account.key, json: { voiceId: voice.id, alias: 'brief' } });
    assert.equal(saved.status, 200);
    assert.equal(await resolver.resolve(ownerOf(account), 'brief', 'voice_v4'), voice.id);
    assert.equal((await t.request('/v1/audio/voices/brief', { method: 'DELETE', key: account.key })).status, 204);
    assert.equal(await resolver.resolve(ownerOf(account), 'brief', 'voice_v4'), null);
  });
});
