import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AudioProvider, ProviderRegistry } from '../../libs/providers/index.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import {
  assertError,
  customRateVoice,
  mp3Frames,
  privateVoice,
  refusedVoices,
  removedVoice,
  UNKNOWN_VOICE_ID,
  usableVoices,
  type VoiceView,
  walletFigures,
} from './voices-helpers.js';

interface LibraryVoice extends VoiceView {
  gender?: string;
  age?: string;
}
interface LibraryPage {
  voices: LibraryVoice[];
  page: number;
  hasMore: boolean;
  totalCount: number;
}

describe('GET /v1/audio/voice-library', () => {
  let t: TestApp;
  let account: TestAccount;

  const library = async (query: string): Promise<LibraryPage> => {
    const answer = await t.request(`/v1/audio/voice-library${query}`, { key: account.key });
    assert.equal(answer.status, 200, await answer.clone().text());
    return (await answer.json()) as LibraryPage;
  };

  /** Every page of a query, checking the page numbers, sizes, hasMore and one totalCount. */
  const allPages = async (filters: string): Promise<LibraryVoice[]> => {
    const voices: LibraryVoice[] = [];
    for (let page = 0; ; page++) {
      const answer = await library(`?${filters}${filters ? '&' : ''}page=${page}`);
      assert.equal(answer.page, page);
      assert.ok(answer.voices.length <= 30);
      voices.push(...answer.voices);
      assert.equal(answer.hasMore, voices.length < answer.totalCount, `hasMore on page ${page}`);
      if (!answer.hasMore) {
        assert.equal(voices.length, answer.totalCount);
        return voices;
      }
      assert.equal(answer.voices.length, 30, 'only the last page is short');
    }
  };

  fundedAppForSuite({ label: 'voices-library', creditUsd: 5, environment: 'test' }, (booted) => ({ t, account } = booted));

  // First of the suite: no sample has been made yet in this process.
  it('makes each sample once, however many requests ask for it at the same time', async () => {
    const provider = t.app.get(ProviderRegistry).get<AudioProvider>('audio', 'sandbox');
    const original = provider.previewSample.bind(provider);
    const calls = new Map<string, number>();
    provider.previewSample = (voiceId: string) => {
      calls.set(voiceId, (calls.get(voiceId) ?? 0) + 1);
      return original(voiceId);
    };
    try {
      const pages = await Promise.all(Array.from({ length: 4 }, () => library('?page=2')));
      const ids = pages[0]!.voices.map((voice) => voice.id);
      assert.ok(ids.length > 0);
      for (const page of pages) assert.deepEqual(page.voices.map((voice) => voice.id), ids);
      for (const id of ids) {
        assert.equal(calls.get(id), 1, `one sample made for ${id}`);
        const [row] = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM media_object WHERE key = $1', [`voice-previews/sandbox/${id}.mp3`]);
        assert.equal(Number(row!.n), 1);
      }
      assert.equal(calls.size, ids.length, 'no sample for a voice that was not listed');
      // Asked again later, the stored sample is reused.
      await library('?page=2');
      assert.ok(ids.every((id) => calls.get(id) === 1));
      for (const page of pages) assert.equal((await fetch(page.voices[0]!.previewUrl!)).status, 200);
    } finally {
      provider.previewSample = original;
    }
  });

  it('pages 0, 1 and 2 hold every usable voice once, 30 a page, with hasMore and totalCount', async () => {
    const usable = usableVoices();
    assert.ok(usable.length >= 60);
    const [first, second, third] = [await library(''), await library('?page=1'), await library('?page=2')];
    assert.equal(first.page, 0);
    assert.deepEqual([first.voices.length, second.voices.length, third.voices.length], [30, 30, Math.min(30, usable.length - 60)]);
    assert.deepEqual([first.hasMore, second.hasMore], [true, true]);
    assert.equal(third.hasMore, usable.length > 90);
    for (const page of [first, second, third]) assert.equal(page.totalCount, usable.length);
    const ids = [...first.voices, ...second.voices, ...third.voices].map((voice) => voice.id);
    assert.equal(new Set(ids).size, ids.length, 'no voice on two pages');
    if (usable.length <= 90) assert.deepEqual(new Set(ids), new Set(usable.map((voice) => voice.id)));
    const beyond = await library('?page=9');
    assert.deepEqual([beyond.voices, beyond.hasMore, beyond.totalCount], [[], false, usable.length]);
  });

  it('describes each voice in the spec shape, from the catalogue', async () => {
    const byId = new Map(usableVoices().map((voice) => [voice.id, voice]));
    for (const voice of (await library('')).voices) {
      const source = byId.get(voice.id);
      assert.ok(source, `${voice.id} is a usable catalogue voice`);
      assert.deepEqual(
        { id: voice.id, name: voice.name, status: voice.status, models: voice.models, gender: voice.gender, age: voice.age, category: voice.category },
        { id: source.id, name: source.name, status: 'available', models: source.models, gender: source.gender, age: source.age, category: source.category },
      );
      assert.equal(voice.language, source.language ?? '');
      assert.equal(voice.accent, source.accent ?? '');
      assert.equal(voice.description, source.description ?? '');
      assert.match(voice.previewUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/media\/voice-previews\//);
      assert.equal('standardRate' in voice, false, 'internal flags stay inside');
    }
  });

  for (const [parameter, field] of [['language', 'language'], ['gender', 'gender'], ['age', 'age']] as const) {
    it(`filters by ${parameter}, on every value the catalogue has`, async () => {
      const values = [...new Set(usableVoices().map((voice) => voice[field]))].filter((value): value is string => value !== undefined);
      assert.ok(values.length >= 2, `several ${field} values in the catalogue`);
      for (const value of values) {
        const found = await allPages(`${parameter}=${value}`);
        assert.ok(found.every((voice) => voice[field] === value));
        assert.deepEqual(new Set(found.map((voice) => voice.id)), new Set(usableVoices().filter((voice) => voice[field] === value).map((voice) => voice.id)));
      }
    });
  }

  it('combines filters', async () => {
    const sample = usableVoices()[5]!;
    const found = await allPages(`language=${sample.language}&gender=${sample.gender}&age=${sample.age}`);
    const expected = usableVoices().filter((v) => v.language === sample.language && v.gender === sample.gender && v.age === sample.age);
    assert.deepEqual(new Set(found.map((voice) => voice.id)), new Set(expected.map((voice) => voice.id)));
    assert.ok(found.some((voice) => voice.id === sample.id));
  });

  it('searches by a part of the name in any case, and by exact id', async () => {
    const sample = usableVoices()[7]!;
    const part = sample.name.slice(1, 4).toUpperCase();
    const byName = await allPages(`search=${encodeURIComponent(part)}`);
    assert.ok(byName.some((voice) => voice.id === sample.id));
    assert.ok(byName.every((voice) => voice.name.toLowerCase().includes(part.toLowerCase())));
    const byId = await library(`?search=${sample.id}`);
    assert.deepEqual([byId.voices.map((voice) => voice.id), byId.totalCount, byId.hasMore], [[sample.id], 1, false]);
  });

  it('voiceId looks one usable voice up; refused and unknown voices give an empty page', async () => {
    const sample = usableVoices()[11]!;
    const found = await library(`?voiceId=${sample.id}`);
    assert.deepEqual([found.voices.map((voice) => voice.id), found.page, found.hasMore, found.totalCount], [[sample.id], 0, false, 1]);
    assert.ok(found.voices[0]!.previewUrl);
    const filteredOut = await library(`?voiceId=${sample.id}&gender=${sample.gender === 'male' ? 'female' : 'male'}`);
    assert.deepEqual([filteredOut.voices, filteredOut.totalCount], [[], 0]);
    for (const voice of [privateVoice(), removedVoice(), customRateVoice(), { id: UNKNOWN_VOICE_ID }]) {
      const empty = await library(`?voiceId=${voice.id}`);
      assert.deepEqual([empty.voices, empty.hasMore, empty.totalCount], [[], false, 0], voice.id);
    }
  });

  it('never lists a private, removed or custom-rate voice, whatever the query', async () => {
    const refused = refusedVoices();
    assert.ok(refused.length >= 3);
    const listed = new Set((await allPages('')).map((voice) => voice.id));
    for (const voice of refused) {
      assert.equal(listed.has(voice.id), false, `${voice.id} (${voice.status}) is not listed`);
      assert.equal((await library(`?search=${voice.id}`)).totalCount, 0);
      assert.ok((await allPages(`search=${encodeURIComponent(voice.name)}`)).every((found) => found.id !== voice.id));
    }
  });

  it('serves each preview as real MP3 bytes without a Bearer, charging nothing', async () => {
    const before = await walletFigures(t, account);
    const voice = (await library('?page=1')).voices[3]!;
    const answer = await fetch(voice.previewUrl!);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'audio/mpeg');
    const bytes = Buffer.from(await answer.arrayBuffer());
    assert.ok(mp3Frames(bytes) >= 10, 'a sample of some length');
    // The same voice's sample again is the same stored object.
    const again = await fetch((await library(`?voiceId=${voice.id}`)).voices[0]!.previewUrl!);
    assert.deepEqual(Buffer.from(await again.arrayBuffer()), bytes);
    const [row] = await t.db.query<{ content_type: string; expires_at: Date | null; workspace_id: string | null }>(
      'SELECT content_type, expires_at, workspace_id FROM media_object WHERE key = $1',
      [`voice-previews/sandbox/${voice.id}.mp3`],
    );
    assert.deepEqual(row, { content_type: 'audio/mpeg', expires_at: null, workspace_id: null });
    assert.deepEqual(await walletFigures(t, account), before);
  });

  const BAD_QUERIES: Array<[string, string]> = [
    ['an unknown parameter', '?foo=1'],
    ['a prototype-named parameter', '?constructor=x'],
    ['a negative page', '?page=-1'],
    ['a fractional page', '?page=1.5'],
    ['a page that is not a number', '?page=two'],
    ['an empty page', '?page='],
    ['a page past 10,000', '?page=10001'],
    ['a repeated page', '?page=1&page=2'],
    ['an unknown gender', '?gender=other'],
    ['an unknown age', '?age=teen'],
    ['a language that is not a code', '?language=english'],
    ['a one-letter language', '?language=e'],
    ['an empty search', '?search='],
    ['a search over 100 characters', `?search=${'a'.repeat(101)}`],
    ['a voiceId that is not an id', '?voiceId=not%20an%20id'],
  ];
  for (const [name, query] of BAD_QUERIES) {
    it(`refuses ${name} with 400 audio.invalid_query and changes nothing`, async () => {
      const before = await walletFigures(t, account);
      await assertError(await t.request(`/v1/audio/voice-library${query}`, { key: account.key }), 400, 'audio.invalid_query');
      assert.deepEqual(await walletFigures(t, account), before);
    });
  }

  it('documents the voice routes and the library parameters in /docs/json', async () => {
    const doc = (await (await t.request('/docs/json')).json()) as { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>> };
    assert.ok(doc.paths['/v1/audio/voices']?.get);
    assert.ok(doc.paths['/v1/audio/voices/import']?.post);
    assert.ok(doc.paths['/v1/audio/voices/{voiceIdOrAlias}']?.delete);
    const query = (doc.paths['/v1/audio/voice-library']?.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    assert.deepEqual(query.sort(), ['age', 'gender', 'language', 'page', 'search', 'voiceId']);
  });

  it('answers 401 audio.unauthorized without a key', async () => {
    await assertError(await t.request('/v1/audio/voice-library'), 401, 'audio.unauthorized');
  });
});
