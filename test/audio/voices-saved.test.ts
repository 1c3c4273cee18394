import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  assertError,
  customRateVoice,
  mp3Frames,
  privateVoice,
  removedVoice,
  savedVoiceRows,
  UNKNOWN_VOICE_ID,
  usableVoices,
  type VoiceView,
  walletFigures,
} from './voices-helpers.js';

interface SavedVoice extends VoiceView {
  alias: string | null;
  savedAt: string;
}

describe('saved voices: import, list, remove', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));

  const importVoice = (account: TestAccount, json: unknown) => t.request('/v1/audio/voices/import', { method: 'POST', key: account.key, json });
  const imported = async (account: TestAccount, json: unknown): Promise<SavedVoice> => {
    const answer = await importVoice(account, json);
    assert.equal(answer.status, 200, await answer.clone().text());
    return (await answer.json()) as SavedVoice;
  };
  const list = async (account: TestAccount): Promise<SavedVoice[]> => {
    const answer = await t.request('/v1/audio/voices', { key: account.key });
    assert.equal(answer.status, 200);
    return ((await answer.json()) as { voices: SavedVoice[] }).voices;
  };
  const remove = (account: TestAccount, ref: string) => t.request(`/v1/audio/voices/${encodeURIComponent(ref)}`, { method: 'DELETE', key: account.key });
  const fresh = () => createAccount(t, { creditUsd: 5, environment: 'test' });

  before(async () => {
    t = await bootTestApp({ label: 'voices-saved', clock });
  });
  after(async () => {
    await t.close();
  });

  it('imports an official voice: the Voice shape plus alias and savedAt, one row, no charge', async () => {
    const account = await fresh();
    const before = await walletFigures(t, account);
    const voice = usableVoices()[0]!;
    const saved = await imported(account, { voiceId: voice.id, alias: 'narrator' });
    assert.deepEqual(
      { id: saved.id, name: saved.name, status: saved.status, models: saved.models, alias: saved.alias, savedAt: saved.savedAt, category: saved.category },
      { id: voice.id, name: voice.name, status: 'available', models: voice.models, alias: 'narrator', savedAt: clock.now().toISOString(), category: voice.category },
    );
    assert.equal(saved.language, voice.language);
    const preview = await fetch(saved.previewUrl!);
    assert.equal(preview.headers.get('content-type'), 'audio/mpeg');
    mp3Frames(Buffer.from(await preview.arrayBuffer()));
    assert.deepEqual(await savedVoiceRows(t, account), [{ voice_id: voice.id, alias: 'narrator', created_at: clock.now() }]);
    assert.deepEqual(await walletFigures(t, account), before);
  });

  it('importing the same voice again answers the same saved voice; a given alias replaces the old one, an omitted one keeps it', async () => {
    const account = await fresh();
    const voice = usableVoices()[1]!;
    const first = await imported(account, { voiceId: voice.id });
    assert.equal(first.alias, null);
    clock.advance(60_000);
    const again = await imported(account, { voiceId: voice.id });
    assert.deepEqual(again, { ...first, previewUrl: again.previewUrl });
    const renamed = await imported(account, { voiceId: voice.id, alias: 'host' });
    assert.deepEqual([renamed.alias, renamed.savedAt], ['host', first.savedAt]);
    const kept = await imported(account, { voiceId: voice.id });
    assert.equal(kept.alias, 'host');
    const rows = await savedVoiceRows(t, account);
    assert.deepEqual(rows.map((row) => [row.voice_id, row.alias]), [[voice.id, 'host']]);
  });

  it('lists only the key’s own voices, newest first', async () => {
    const account = await fresh();
    const other = await fresh();
    const [a, b, c] = usableVoices().slice(2, 5);
    for (const voice of [a!, b!, c!]) {
      await imported(account, { voiceId: voice.id });
      clock.advance(1000);
    }
    await imported(other, { voiceId: usableVoices()[6]!.id, alias: 'theirs' });
    assert.deepEqual((await list(account)).map((voice) => voice.id), [c!.id, b!.id, a!.id]);
    assert.deepEqual((await list(other)).map((voice) => [voice.id, voice.alias]), [[usableVoices()[6]!.id, 'theirs']]);
    assert.deepEqual(await list(await fresh()), []);
  });

  it('removes a saved voice by alias or by voice id (204), then answers 404', async () => {
    const account = await fresh();
    const [a, b] = usableVoices().slice(7, 9);
    await imported(account, { voiceId: a!.id, alias: 'first' });
    await imported(account, { voiceId: b!.id });
    const byAlias = await remove(account, 'first');
    assert.equal(byAlias.status, 204);
    assert.equal(await byAlias.text(), '');
    assert.equal((await remove(account, b!.id)).status, 204);
    assert.deepEqual(await savedVoiceRows(t, account), []);
    await assertError(await remove(account, 'first'), 404, 'audio.voice_not_found');
    await assertError(await remove(account, a!.id), 404, 'audio.voice_not_found');
    await assertError(await remove(account, 'x'.repeat(65)), 404, 'audio.voice_not_found');
    // Names no binding can have: a NUL byte (which PostgreSQL cannot compare), spaces, upper case.
    for (const odd of ['first\u0000', 'two words', 'First', '\u00e9t\u00e9']) await assertError(await remove(account, odd), 404, 'audio.voice_not_found');
    // The alias is free again.
    assert.equal((await imported(account, { voiceId: b!.id, alias: 'first' })).alias, 'first');
  });

  it('another key neither sees nor removes a key’s saved voice (404), even in the same workspace', async () => {
    const owner = await fresh();
    const sibling = await issueKey(t, owner.workspaceId, 'test');
    const stranger = { workspaceId: owner.workspaceId, keyId: sibling.keyId, key: sibling.key };
    const voice = usableVoices()[9]!;
    await imported(owner, { voiceId: voice.id, alias: 'mine' });
    assert.deepEqual(await list(stranger), []);
    await assertError(await remove(stranger, 'mine'), 404, 'audio.voice_not_found');
    await assertError(await remove(stranger, voice.id), 404, 'audio.voice_not_found');
    assert.deepEqual((await savedVoiceRows(t, owner)).map((row) => row.alias), ['mine']);
    // Aliases are unique per key, not per workspace.
    assert.equal((await imported(stranger, { voiceId: usableVoices()[10]!.id, alias: 'mine' })).alias, 'mine');
  });

  it('an alias naming another voice of the key is 409 audio.alias_conflict, and nothing changes', async () => {
    const account = await fresh();
    const [a, b] = usableVoices().slice(11, 13);
    await imported(account, { voiceId: a!.id, alias: 'lead' });
    await imported(account, { voiceId: b!.id, alias: 'second' });
    const before = await savedVoiceRows(t, account);
    await assertError(await importVoice(account, { voiceId: b!.id, alias: 'lead' }), 409, 'audio.alias_conflict');
    const newcomer = usableVoices()[13]!;
    await assertError(await importVoice(account, { voiceId: newcomer.id, alias: 'lead' }), 409, 'audio.alias_conflict');
    assert.deepEqual(await savedVoiceRows(t, account), before);
  });

  it('a key holds at most 500 saved voices: one more is 409 audio.saved_voices_limit; re-importing a saved one still works', async () => {
    const account = await fresh();
    const saved = usableVoices()[14]!;
    await imported(account, { voiceId: saved.id });
    // Fill up to the limit directly: the sandbox catalogue has fewer voices than the limit.
    await t.db.query(
      `INSERT INTO saved_voice (id, api_key_id, voice_id, alias, adapter, voice, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Filler' || lpad(n::text, 14, '0'), NULL, 'sandbox', $2::jsonb, now(), now() FROM generate_series(1, 499) AS n`,
      [account.keyId, JSON.stringify(saved)],
    );
    await assertError(await importVoice(account, { voiceId: usableVoices()[15]!.id }), 409, 'audio.saved_voices_limit');
    assert.equal((await imported(account, { voiceId: saved.id, alias: 'still-here' })).alias, 'still-here');
    assert.equal((await savedVoiceRows(t, account)).length, 500);
    assert.equal((await list(account)).length, 500);
  });

  it('parallel imports of one alias onto different voices: exactly one wins, the others are 409 audio.alias_conflict', async () => {
    const account = await fresh();
    const voices = usableVoices().slice(30, 36);
    const answers = await Promise.all(voices.map((voice) => importVoice(account, { voiceId: voice.id, alias: 'contested' })));
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409]);
    for (const answer of answers.filter((a) => a.status === 409)) await assertError(answer, 409, 'audio.alias_conflict');
    const rows = await savedVoiceRows(t, account);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.alias, 'contested');
  });

  it('parallel imports at the edge of the limit never pass it', async () => {
    const account = await fresh();
    await t.db.query(
      `INSERT INTO saved_voice (id, api_key_id, voice_id, alias, adapter, voice, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Filler' || lpad(n::text, 14, '0'), NULL, 'sandbox', $2::jsonb, now(), now() FROM generate_series(1, 498) AS n`,
      [account.keyId, JSON.stringify(usableVoices()[0])],
    );
    const answers = await Promise.all(usableVoices().slice(40, 45).map((voice) => importVoice(account, { voiceId: voice.id })));
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 200, 409, 409, 409]);
    for (const answer of answers.filter((a) => a.status === 409)) await assertError(answer, 409, 'audio.saved_voices_limit');
    assert.equal((await savedVoiceRows(t, account)).length, 500);
  });

  /** [name, body, status, code] */
  const REFUSALS: Array<[string, () => unknown, number, string]> = [
    ['a private voice', () => ({ voiceId: privateVoice().id }), 400, 'audio.voice_unsupported'],
    ['a removed voice', () => ({ voiceId: removedVoice().id }), 400, 'audio.voice_unsupported'],
    ['a custom-rate voice', () => ({ voiceId: customRateVoice().id }), 400, 'audio.voice_unsupported'],
    ['an unknown voice id', () => ({ voiceId: UNKNOWN_VOICE_ID }), 400, 'audio.voice_unsupported'],
    ['an alias instead of a voice id', () => ({ voiceId: 'existing-alias' }), 400, 'audio.voice_unsupported'],
    ['a voice id of the wrong shape', () => ({ voiceId: 'abc' }), 400, 'audio.voice_unsupported'],
    ['a missing voiceId', () => ({ alias: 'nobody' }), 400, 'audio.invalid_field'],
    ['a voiceId that is not a string', () => ({ voiceId: 42 }), 400, 'audio.invalid_field'],
    ['an empty voiceId', () => ({ voiceId: '' }), 400, 'audio.invalid_field'],
    ['an unknown field', () => ({ voiceId: usableVoices()[20]!.id, name: 'x' }), 400, 'audio.unknown_field'],
    ['an upper-case alias', () => ({ voiceId: usableVoices()[20]!.id, alias: 'Narrator' }), 400, 'audio.invalid_field'],
    ['an alias with a space', () => ({ voiceId: usableVoices()[20]!.id, alias: 'two words' }), 400, 'audio.invalid_field'],
    ['an empty alias', () => ({ voiceId: usableVoices()[20]!.id, alias: '' }), 400, 'audio.invalid_field'],
    ['an alias of 65 characters', () => ({ voiceId: usableVoices()[20]!.id, alias: 'a'.repeat(65) }), 400, 'audio.invalid_field'],
    ['a null alias', () => ({ voiceId: usableVoices()[20]!.id, alias: null }), 400, 'audio.invalid_field'],
    ['an alias shaped like an official id', () => ({ voiceId: usableVoices()[20]!.id, alias: 'abcdefghij0123456789' }), 400, 'audio.invalid_field'],
    ['a body that is not an object', () => ['voiceId'], 400, 'audio.invalid_field'],
  ];

  describe('refusals: a 4xx audio.* envelope and no change', () => {
    let account: TestAccount;
    before(async () => {
      account = await fresh();
      await imported(account, { voiceId: usableVoices()[21]!.id, alias: 'existing-alias' });
    });
    for (const [name, body, status, code] of REFUSALS) {
      it(`refuses ${name} with ${status} ${code}`, async () => {
        const rows = await savedVoiceRows(t, account);
        const wallet = await walletFigures(t, account);
        await assertError(await importVoice(account, body()), status, code);
        assert.deepEqual(await savedVoiceRows(t, account), rows);
        assert.deepEqual(await walletFigures(t, account), wallet);
      });
    }
  });

  it('accepts the longest alias and every allowed character', async () => {
    const account = await fresh();
    const alias = `a-b_c-0123456789${'z'.repeat(48)}`;
    assert.equal(alias.length, 64);
    assert.equal((await imported(account, { voiceId: usableVoices()[22]!.id, alias })).alias, alias);
    assert.equal((await remove(account, alias)).status, 204);
  });
});
