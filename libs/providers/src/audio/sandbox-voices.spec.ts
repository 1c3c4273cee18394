import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUDIO_MODEL_IDS } from './audio-provider.js';
import { findSandboxVoice, isUsableVoice, listSandboxVoices, MAX_VOICE_PAGE_SIZE } from './sandbox-voice-catalogue.js';
import { SANDBOX_VOICES } from './sandbox-voices.js';

const usable = SANDBOX_VOICES.filter(isUsableVoice);
const refused = SANDBOX_VOICES.filter((voice) => !isUsableVoice(voice));
const page = (query: Partial<Parameters<typeof listSandboxVoices>[0]> = {}) => listSandboxVoices({ page: 0, pageSize: 30, ...query });

describe('sandbox voice catalogue: contents', () => {
  it('holds at least 60 usable voices and refused ones of every kind', () => {
    assert.ok(usable.length >= 60, `${usable.length} usable voices`);
    assert.ok(refused.filter((voice) => voice.status === 'private').length >= 2);
    assert.ok(refused.filter((voice) => voice.status === 'removed').length >= 2);
    assert.ok(refused.filter((voice) => voice.status === 'available' && !voice.standardRate).length >= 2);
  });

  it('ids are unique, 20 base62 characters, in the upstream style', () => {
    assert.equal(new Set(SANDBOX_VOICES.map((voice) => voice.id)).size, SANDBOX_VOICES.length);
    for (const voice of SANDBOX_VOICES) assert.match(voice.id, /^[0-9A-Za-z]{20}$/);
  });

  it('every voice is described: name, language, accent, gender, age, description, category, models', () => {
    for (const voice of SANDBOX_VOICES) {
      assert.ok(voice.name && voice.accent && voice.description, voice.id);
      assert.match(voice.language!, /^[a-z]{2}$/);
      assert.ok(['female', 'male', 'neutral'].includes(voice.gender!));
      assert.ok(['young', 'middle_aged', 'old'].includes(voice.age!));
      assert.ok(voice.models.length > 0 && voice.models.every((model) => AUDIO_MODEL_IDS.includes(model)));
    }
    assert.ok(new Set(usable.map((voice) => voice.language)).size >= 5, 'several languages');
    for (const value of ['female', 'male', 'neutral']) assert.ok(usable.some((voice) => voice.gender === value), value);
    for (const value of ['young', 'middle_aged', 'old']) assert.ok(usable.some((voice) => voice.age === value), value);
    const premade = usable.filter((voice) => voice.category === 'premade').length;
    assert.ok(premade >= 3 && premade < usable.length / 2, `${premade} premade`);
  });

  it('most voices speak all three models, some not voice_v4_turbo', () => {
    const notTurbo = usable.filter((voice) => !voice.models.includes('voice_v4_turbo'));
    assert.ok(notTurbo.length >= 2);
    assert.ok(usable.filter((voice) => voice.models.length === AUDIO_MODEL_IDS.length).length > usable.length / 2);
  });
});

describe('sandbox voice catalogue: listing', () => {
  it('pages 0, 1 and 2 at 30 cover every usable voice once, in a stable order, with hasMore and totalCount', () => {
    const pages = [0, 1, 2].map((number) => page({ page: number }));
    assert.deepEqual(pages.map((p) => p.voices.length), [30, 30, usable.length - 60]);
    assert.deepEqual(pages.map((p) => p.hasMore), [true, true, false]);
    for (const p of pages) assert.equal(p.totalCount, usable.length);
    assert.deepEqual(pages.flatMap((p) => p.voices.map((voice) => voice.id)), usable.map((voice) => voice.id));
    assert.deepEqual(page({ page: 1 }), pages[1], 'the same page twice is the same page');
    assert.deepEqual(page({ page: 3 }), { voices: [], hasMore: false, totalCount: usable.length });
  });

  it('never lists a refused voice, even searched by its exact id or name', () => {
    const listed = new Set([0, 1, 2].flatMap((number) => page({ page: number }).voices.map((voice) => voice.id)));
    for (const voice of refused) {
      assert.ok(!listed.has(voice.id), voice.id);
      assert.equal(page({ search: voice.id }).totalCount, 0);
      assert.equal(page({ search: voice.name }).totalCount, 0, voice.name);
    }
  });

  it('search: a case-insensitive name substring, or an exact id', () => {
    const ros = page({ search: 'ROS' }).voices.map((voice) => voice.name);
    assert.deepEqual(ros.sort(), ['Rosalind', 'Rose']);
    const target = usable[42]!;
    assert.deepEqual(page({ search: target.id }).voices.map((voice) => voice.id), [target.id]);
    assert.equal(page({ search: target.id.toLowerCase() === target.id ? `${target.id}x` : target.id.toLowerCase() }).totalCount, 0, 'ids match exactly');
    assert.equal(page({ search: 'no such voice' }).totalCount, 0);
  });

  it('filters by language, gender and age, together', () => {
    for (const [language, gender, age] of [['en', 'female', 'young'], ['ja', 'male', 'old'], ['es', 'neutral', 'young']] as const) {
      const expected = usable.filter((voice) => voice.language === language && voice.gender === gender && voice.age === age);
      const found = page({ language, gender, age });
      assert.ok(expected.length > 0);
      assert.deepEqual(found.voices.map((voice) => voice.id), expected.map((voice) => voice.id));
      assert.equal(found.totalCount, expected.length);
    }
    const french = page({ language: 'fr' });
    assert.ok(french.totalCount > 0 && french.voices.every((voice) => voice.language === 'fr'));
  });

  it('brings a page size outside 1–30 inside it', () => {
    assert.equal(page({ pageSize: 500 }).voices.length, MAX_VOICE_PAGE_SIZE);
    assert.equal(page({ pageSize: 0 }).voices.length, 1);
    assert.deepEqual(page({ page: -4 }), page({ page: 0 }));
  });
});

describe('sandbox voice catalogue: lookup', () => {
  it('finds any voice by exact id, refused ones included, and null for an unknown id', () => {
    for (const voice of [usable[0]!, ...refused]) assert.deepEqual(findSandboxVoice(voice.id), { ...voice, models: [...voice.models] });
    assert.equal(findSandboxVoice('AAAAAAAAAAAAAAAAAAAA'), null);
    assert.equal(findSandboxVoice(usable[0]!.id.toLowerCase()), null);
  });

  it('hands out copies: changing one leaves the catalogue as it was', () => {
    const voice = findSandboxVoice(usable[0]!.id)!;
    voice.name = 'changed';
    voice.models.pop();
    assert.equal(findSandboxVoice(usable[0]!.id)!.name, usable[0]!.name);
    assert.equal(findSandboxVoice(usable[0]!.id)!.models.length, usable[0]!.models.length);
  });
});
