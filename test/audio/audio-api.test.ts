import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { createAudio, footprint, GENERATIONS, getAudio, ledgerOf, speechBody, voicesFor, waitForAudio } from './audio-helpers.js';
import { customRateVoice, notTurboVoice, privateVoice, removedVoice, UNKNOWN_VOICE_ID } from './voices-helpers.js';

const V4 = voicesFor('voice_v4');
const line = (i: number, text = 'Hi.') => ({ text, voiceId: V4[i % V4.length]!.id });

/** [name, body, code, field the message starts with]: every one a 400 that changes nothing. */
const REFUSALS: Array<[string, Record<string, unknown>, string, string]> = [
  ['unknown model', speechBody({ model: 'voice_v5' }), 'audio.invalid_field', 'model'],
  ['unknown mode', speechBody({ mode: 'sing' }), 'audio.invalid_field', 'mode'],
  ['unknown field', speechBody({ stability: 0.5 }), 'audio.unknown_field', 'stability'],
  ['unknown nested field', speechBody({ providerOptions: { voice: { style: 1 } } }), 'audio.unknown_field', 'providerOptions.voice.style'],
  ['missing prompt', speechBody({ prompt: undefined }), 'audio.invalid_field', 'prompt'],
  ['prompt over 2,000 characters', speechBody({ prompt: 'a'.repeat(2001) }), 'audio.text_too_long', 'prompt'],
  ['missing voice', speechBody({ controls: {} }), 'audio.invalid_field', 'controls.voiceId'],
  ['bad output format', speechBody({ controls: { voiceId: V4[0]!.id, outputFormat: 'ogg' } }), 'audio.invalid_field', 'controls.outputFormat'],
  ['bad language code', speechBody({ controls: { voiceId: V4[0]!.id, languageCode: 'english' } }), 'audio.invalid_field', 'controls.languageCode'],
  ['seed out of range', speechBody({ providerOptions: { voice: { seed: 4294967296 } } }), 'audio.invalid_field', 'providerOptions.voice.seed'],
  ['bad normalization', speechBody({ providerOptions: { voice: { applyTextNormalization: 'maybe' } } }), 'audio.invalid_field', 'providerOptions.voice.applyTextNormalization'],
  ['unknown voice', speechBody({ controls: { voiceId: UNKNOWN_VOICE_ID } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['private voice', speechBody({ controls: { voiceId: privateVoice().id } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['removed voice', speechBody({ controls: { voiceId: removedVoice().id } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['custom-rate voice', speechBody({ controls: { voiceId: customRateVoice().id } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['voice that does not speak turbo', speechBody({ model: 'voice_v4_turbo', controls: { voiceId: notTurboVoice().id } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['an alias this key never saved', speechBody({ controls: { voiceId: 'not-my-alias' } }), 'audio.voice_unsupported', 'controls.voiceId'],
  ['turbo dialogue', { model: 'voice_v4_turbo', mode: 'text_to_dialogue', dialogue: [line(0)] }, 'audio.unsupported_mode', 'mode'],
  ['dialogue with a prompt', { model: 'voice_v4', mode: 'text_to_dialogue', prompt: 'x', dialogue: [line(0)] }, 'audio.invalid_field', 'prompt'],
  ['dialogue with a top-level voice', { model: 'voice_v4', mode: 'text_to_dialogue', controls: { voiceId: V4[0]!.id }, dialogue: [line(0)] }, 'audio.invalid_field', 'controls.voiceId'],
  ['dialogue of 101 lines', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: Array.from({ length: 101 }, (_, i) => line(i % 2)) }, 'audio.invalid_field', 'dialogue'],
  // Bodies no DTO could accept are refused before the validation pipe spends seconds on them (so before the bad model too).
  ['dialogue of 30,000 entries', { model: 'voice_v9', mode: 'text_to_dialogue', dialogue: Array.from({ length: 30_000 }, () => ({ text: 'a', voiceId: 'x' })) }, 'audio.invalid_field', 'dialogue'],
  ['controls of 60,000 unknown fields', { ...speechBody({ model: 'voice_v9' }), controls: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 1])) }, 'audio.unknown_field', 'controls.k0'],
  ['dialogue of 11 voices', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: Array.from({ length: 11 }, (_, i) => ({ text: 'a', voiceId: `voice-${i}` })) }, 'audio.invalid_field', 'dialogue'],
  ['dialogue over 2,000 characters', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0, 'a'.repeat(1500)), line(1, 'b'.repeat(501))] }, 'audio.text_too_long', 'dialogue'],
  ['one dialogue line of 2,001 characters', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0, 'a'.repeat(2001))] }, 'audio.text_too_long', 'dialogue'],
  ['dialogue with an unknown voice', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0), { text: 'x', voiceId: UNKNOWN_VOICE_ID }] }, 'audio.voice_unsupported', 'dialogue.1.voiceId'],
  ['prompt of whitespace only', speechBody({ prompt: ' \n\t ' }), 'audio.invalid_field', 'prompt'],
  ['prompt with a NUL character', speechBody({ prompt: 'a\u0000b' }), 'audio.invalid_field', 'prompt'],
  ['prompt with a lone surrogate', speechBody({ prompt: 'a\ud800b' }), 'audio.invalid_field', 'prompt'],
  ['dialogue line with a NUL character', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0), line(1, 'b\u0000')] }, 'audio.invalid_field', 'dialogue.1.text'],
  ['a dialogue entry that is a list (was a 500)', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [[line(0)]] }, 'audio.invalid_field', 'dialogue'],
  ['an empty list as a dialogue entry', { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0), []] }, 'audio.invalid_field', 'dialogue'],
  ['prompt of 2,001 emoji', speechBody({ prompt: '😀'.repeat(2001) }), 'audio.text_too_long', 'prompt'],
  ['prompt of 2,001 code points with combining accents', speechBody({ prompt: `${'e\u0301'.repeat(1000)}e` }), 'audio.text_too_long', 'prompt'],
];

describe('audio generations API: validation, money, idempotency, ownership', () => {
  let t: TestApp;
  let account: TestAccount;

  fundedAppForSuite({ label: 'audioapi', env: { AUDIO_MAX_PENDING_PER_KEY: '3' }, creditUsd: 20, environment: 'test' }, (booted) => ({ t, account } = booted));

  for (const [name, body, code, field] of REFUSALS) {
    it(`refuses ${name}: 400 ${code} naming ${field}; no hold, no task, no key`, async () => {
      const before = await footprint(t, account);
      const answer = await createAudio(t, account, body, { 'idempotency-key': `refused-${name.replace(/\W+/g, '-')}` });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code, answer.body.error.message);
      assert.ok(answer.body.error.message.startsWith(field), `"${answer.body.error.message}" should name ${field}`);
      assert.deepEqual(await footprint(t, account), before);
    });
  }

  it('refuses a malformed Idempotency-Key with 400 audio.invalid_idempotency_key, changing nothing', async () => {
    for (const bad of ['two words', 'x'.repeat(129), 'tab\there']) {
      const before = await footprint(t, account);
      const answer = await t.request(GENERATIONS, { method: 'POST', key: account.key, json: speechBody(), headers: { 'idempotency-key': bad } });
      assert.equal(answer.status, 400, bad);
      assert.equal(((await answer.json()) as any).error.code, 'audio.invalid_idempotency_key');
      assert.deepEqual(await footprint(t, account), before);
    }
  });

  it('answers 401 with an audio. code for a bad key, and 402 audio.insufficient_balance for an empty wallet, changing nothing', async () => {
    const unauthorized = await createAudio(t, { key: 'svc_test_nope' }, speechBody());
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.body.error.code, 'audio.unauthorized');
    // The key is judged before the body's bound (the global guard runs before the route's).
    const crowded = await createAudio(t, { key: 'svc_test_nope' }, { ...speechBody(), dialogue: Array.from({ length: 101 }, () => ({ text: 'a', voiceId: 'x' })) });
    assert.equal(crowded.status, 401);
    assert.equal(crowded.body.error.code, 'audio.unauthorized');
    const poor = await createAccount(t, { environment: 'test' });
    const before = await footprint(t, poor);
    const answer = await createAudio(t, poor, speechBody(), { 'idempotency-key': 'poor-1' });
    assert.equal(answer.status, 402);
    assert.equal(answer.body.error.code, 'audio.insufficient_balance');
    assert.deepEqual(await footprint(t, poor), before);
  });

  it('counts a dialogue line in characters, not UTF-16 units: 1,500 emoji are 1,500 characters', async () => {
    const response = await t.request('/v1/audio/estimate', { method: 'POST', key: account.key, json: { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [line(0, '😀'.repeat(1500))] } });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(((await response.json()) as { inputCharacters: number }).inputCharacters, 1500);
  });

  it('counts ten distinct voices once aliases resolve: an alias and its voice are one voice', async () => {
    assert.ok(V4.length >= 11, 'the catalogue has eleven voice_v4 voices');
    const owner = await createAccount(t, { creditUsd: 5, environment: 'test' });
    const saved = await t.request('/v1/audio/voices/import', { method: 'POST', key: owner.key, json: { voiceId: V4[0]!.id, alias: 'narrator' } });
    assert.equal(saved.status, 200, await saved.clone().text());
    // Eleven names, ten voices: taken.
    const ten = [...Array.from({ length: 10 }, (_, i) => line(i)), { text: 'Hi.', voiceId: 'narrator' }];
    const estimate = await t.request('/v1/audio/estimate', { method: 'POST', key: owner.key, json: { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: ten } });
    assert.equal(estimate.status, 200, await estimate.clone().text());
    const taken = await createAudio(t, owner, { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: ten });
    assert.equal(taken.status, 200, JSON.stringify(taken.body));
    // Eleven voices (one of them through its alias): refused, nothing more held.
    const before = await footprint(t, owner);
    const eleven = [...Array.from({ length: 10 }, (_, i) => line(i + 1)), { text: 'Hi.', voiceId: 'narrator' }];
    const refused = await createAudio(t, owner, { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: eleven });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.error, { code: 'audio.invalid_field', message: 'dialogue: 11 distinct voices; at most 10' });
    assert.deepEqual(await footprint(t, owner), before);
  });

  it('holds price × input characters at creation, answers the spec shape, and settles on the billable characters', async () => {
    const prompt = 'Twenty-eight characters!!!!.';
    const created = await createAudio(t, account, speechBody({ prompt }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^audio:[0-9a-f-]{36}$/);
    assert.deepEqual(Object.keys(created.body).slice(0, 4), ['id', 'model', 'status', 'outputs']);
    assert.equal(created.body.status, 'queued');
    assert.deepEqual(created.body.outputs, { audios: [] });
    assert.deepEqual(created.body.usage, { inputCharacters: prompt.length, billableCharacters: 0, chargedUsd: 0 });
    const held = await ledgerOf(t, created.body.id);
    assert.equal(held.amount, 240n * BigInt(prompt.length));
    const done = await waitForAudio(t, account, created.body.id);
    assert.equal(done.status, 'succeeded', done.failureReason);
    assert.equal(done.usage.billableCharacters, prompt.length);
    assert.equal(done.usage.chargedUsd, (240 * prompt.length) / 1e6);
    const settled = await ledgerOf(t, created.body.id);
    assert.equal(settled.captured, 240n * BigInt(prompt.length));
    assert.equal(settled.captured + settled.released, settled.amount);
  });

  it('replays a decided key: same task, 200, Idempotency-Replay: true; another request under it → 409 audio.idempotency_conflict', async () => {
    const first = await createAudio(t, account, speechBody({ prompt: 'Say it once.' }), { 'idempotency-key': 'replay-1' });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotency-replay'), null);
    const again = await createAudio(t, account, speechBody({ prompt: 'Say it once.', controls: { voiceId: V4[0]!.id, outputFormat: 'mp3_44100_128' } }), { 'idempotency-key': 'replay-1' });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotency-replay'), 'true');
    assert.equal(again.body.id, first.body.id);
    const before = await footprint(t, account);
    const changed = await createAudio(t, account, speechBody({ prompt: 'Say it twice.' }), { 'idempotency-key': 'replay-1' });
    assert.equal(changed.status, 409);
    assert.equal(changed.body.error.code, 'audio.idempotency_conflict');
    assert.deepEqual(await footprint(t, account), before);
    await waitForAudio(t, account, first.body.id);
  });

  it('scopes keys per API key: the same key string on another API key makes its own task', async () => {
    const other = await issueKey(t, account.workspaceId, 'test');
    const mine = await createAudio(t, account, speechBody({ prompt: 'scoped' }), { 'idempotency-key': 'scope-1' });
    const theirs = await createAudio(t, other, speechBody({ prompt: 'scoped' }), { 'idempotency-key': 'scope-1' });
    assert.equal(mine.status, 200);
    assert.equal(theirs.status, 200);
    assert.notEqual(theirs.body.id, mine.body.id);
    assert.equal(theirs.headers.get('idempotency-replay'), null);
    const rows = await t.db.query(`SELECT endpoint FROM audio_idempotency WHERE key = 'scope-1'`);
    assert.equal(rows.length, 2);
    // Another key's record is invisible: a different request under the same key string is no conflict.
    const stranger = await createAccount(t, { creditUsd: 1, environment: 'test' });
    const strangers = await createAudio(t, stranger, speechBody({ prompt: 'something else entirely' }), { 'idempotency-key': 'scope-1' });
    assert.equal(strangers.status, 200, JSON.stringify(strangers.body));
    assert.notEqual(strangers.body.id, mine.body.id);
    assert.equal(strangers.headers.get('idempotency-replay'), null);
    await waitForAudio(t, stranger, strangers.body.id);
    await waitForAudio(t, account, mine.body.id);
    await waitForAudio(t, other, theirs.body.id);
  });

  it('answers 409 audio.request_in_progress while the same key is being decided', async () => {
    // Hold the key's claim from another connection, as a concurrent request deciding it would.
    const { Client } = await import('pg');
    const client = new Client({ connectionString: t.db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`audio-idempotency|${account.keyId}|generations|busy-1`]);
      const before = await footprint(t, account);
      const busy = await createAudio(t, account, speechBody({ prompt: 'busy' }), { 'idempotency-key': 'busy-1' });
      assert.equal(busy.status, 409);
      assert.equal(busy.body.error.code, 'audio.request_in_progress');
      assert.deepEqual(await footprint(t, account), before);
      await client.query('ROLLBACK');
      const decided = await createAudio(t, account, speechBody({ prompt: 'busy' }), { 'idempotency-key': 'busy-1' });
      assert.equal(decided.status, 200);
      await waitForAudio(t, account, decided.body.id);
    } finally {
      await client.end();
    }
  });

  it('50 parallel identical requests with one key make exactly one task and one hold', async () => {
    const body = speechBody({ prompt: 'fifty at once' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => createAudio(t, account, body, { 'idempotency-key': 'race-50' })));
    const ok = answers.filter((a) => a.status === 200);
    assert.ok(ok.length >= 1);
    for (const a of answers) assert.ok(a.status === 200 || (a.status === 409 && a.body.error.code === 'audio.request_in_progress'), JSON.stringify(a.body));
    assert.equal(new Set(ok.map((a) => a.body.id)).size, 1);
    const id = ok[0]!.body.id as string;
    const [tasks] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM audio_task WHERE api_key_id = $1 AND request->'inputs'->0->>'text' = 'fifty at once'`, [account.keyId]);
    assert.equal(Number(tasks!.n), 1);
    assert.equal((await ledgerOf(t, id)).holds, 1);
    const [holds] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM hold WHERE subject_type = 'audio_task' AND subject_id IN (SELECT id FROM audio_task WHERE request->'inputs'->0->>'text' = 'fifty at once')`);
    assert.equal(Number(holds!.n), 1);
    await waitForAudio(t, account, id);
  });

  it('answers 429 audio.too_many_pending above AUDIO_MAX_PENDING_PER_KEY, changing nothing', async () => {
    const busy = await createAccount(t, { creditUsd: 5, environment: 'test' });
    const slow = Array.from({ length: 3 }, (_, i) => speechBody({ prompt: `slow ${i} [sandbox:delay=3000]` }));
    const pending = await Promise.all(slow.map((body) => createAudio(t, busy, body)));
    for (const p of pending) assert.equal(p.status, 200);
    const before = await footprint(t, busy);
    const refused = await createAudio(t, busy, speechBody({ prompt: 'one too many' }));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'audio.too_many_pending');
    assert.deepEqual(await footprint(t, busy), before);
    for (const p of pending) await waitForAudio(t, busy, p.body.id);
    const later = await createAudio(t, busy, speechBody({ prompt: 'room again' }));
    assert.equal(later.status, 200);
    await waitForAudio(t, busy, later.body.id);
  });

  it("answers 404 audio.not_found for another key's task, a malformed id and a missing one, on both prefixes", async () => {
    const created = await createAudio(t, account, speechBody({ prompt: 'mine only' }));
    const other = await createAccount(t, { creditUsd: 1, environment: 'test' });
    for (const prefix of ['/v1', '/api/svc/v1']) {
      for (const [key, id] of [[other.key, created.body.id], [account.key, 'audio:nope'], [account.key, 'audio:00000000-0000-4000-8000-000000000000']] as const) {
        const response = await t.request(`${prefix}/audio/generations/${encodeURIComponent(id)}`, { key });
        assert.equal(response.status, 404);
        assert.equal(((await response.json()) as any).error.code, 'audio.not_found');
      }
      assert.equal((await getAudio(t, account, created.body.id, prefix)).id, created.body.id);
    }
    const theirs = (await (await t.request('/api/svc/v1/audio/generations', { key: other.key })).json()) as any;
    assert.deepEqual(theirs.items, []);
    await waitForAudio(t, account, created.body.id);
  });

  it('lists own tasks newest first with cursor paging on both paths, filtered by status', async () => {
    const lister = await createAccount(t, { creditUsd: 2, environment: 'test' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createAudio(t, lister, speechBody({ prompt: `list ${i}` }))).body.id);
    for (const id of ids) await waitForAudio(t, lister, id);
    for (const path of ['/api/svc/v1/audio/generations', GENERATIONS]) {
      const first = (await (await t.request(`${path}?limit=2`, { key: lister.key })).json()) as any;
      assert.deepEqual(first.items.map((i: any) => i.id), [ids[2], ids[1]]);
      assert.equal(first.hasMore, true);
      const second = (await (await t.request(`${path}?limit=2&after=${first.nextCursor}`, { key: lister.key })).json()) as any;
      assert.deepEqual(second.items.map((i: any) => i.id), [ids[0]]);
      assert.equal(second.hasMore, false);
      assert.equal(second.nextCursor, null);
    }
    const failed = (await (await t.request('/api/svc/v1/audio/generations?status=failed', { key: lister.key })).json()) as any;
    assert.deepEqual(failed.items, []);
    const bad = await t.request('/api/svc/v1/audio/generations?status=running', { key: lister.key });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).error.code, 'audio.invalid_field');
  });

  it('counts characters as Unicode code points: 2,000 emoji or 1,000 accented letters (e + U+0301) fit, and are held as such', async () => {
    for (const prompt of ['😀'.repeat(2000), 'e\u0301'.repeat(1000)]) {
      const estimate = await t.request('/v1/audio/estimate', { method: 'POST', key: account.key, json: speechBody({ prompt }) });
      assert.equal(estimate.status, 200);
      assert.deepEqual(await estimate.json(), { model: 'voice_v4', mode: 'text_to_speech', inputCharacters: 2000, billableCharacters: 2000, estimatedUsd: (240 * 2000) / 1e6 });
    }
    const prompt = 'Caf\u00e9 vs cafe\u0301 👍🏽';
    const created = await createAudio(t, account, speechBody({ prompt }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    // C a f é (4) + " vs " (4) + c a f e ◌́ (5) + space (1) + 👍 + skin tone (2) = 16 code points.
    assert.equal(created.body.usage.inputCharacters, 16);
    assert.equal((await ledgerOf(t, created.body.id)).amount, 240n * 16n);
    await waitForAudio(t, account, created.body.id);
  });

  it('estimates with the same validation and no hold, no task', async () => {
    const before = await footprint(t, account);
    const response = await t.request('/v1/audio/estimate', { method: 'POST', key: account.key, json: { model: 'voice_v3', mode: 'text_to_dialogue', dialogue: [line(0, 'Hello'), line(1, 'there!')] } });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { model: 'voice_v3', mode: 'text_to_dialogue', inputCharacters: 11, billableCharacters: 11, estimatedUsd: (300 * 11) / 1e6 });
    const refused = await t.request('/v1/audio/estimate', { method: 'POST', key: account.key, json: speechBody({ model: 'voice_v4_turbo', mode: 'text_to_dialogue', prompt: undefined, controls: undefined, dialogue: [line(0)] }) });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as any).error.code, 'audio.unsupported_mode');
    assert.deepEqual(await footprint(t, account), before);
  });

  it('lists the models with modes, formats, limits and the catalogue prices', async () => {
    const response = await t.request('/v1/audio/models', { key: account.key });
    assert.equal(response.status, 200);
    const { models } = (await response.json()) as any;
    assert.deepEqual(models.map((m: any) => [m.id, m.modes, m.pricing.perCharacterUsd]), [
      ['voice_v3', ['text_to_speech', 'text_to_dialogue'], 0.0003],
      ['voice_v4', ['text_to_speech', 'text_to_dialogue'], 0.00024],
      ['voice_v4_turbo', ['text_to_speech'], 0.00012],
    ]);
    assert.deepEqual(models[0].limits, { maxTextCharacters: 2000, maxDialogueEntries: 100, maxDialogueVoices: 10 });
    assert.deepEqual(models[2].limits, { maxTextCharacters: 2000 });
    assert.deepEqual(models[0].outputFormats, ['mp3_44100_128', 'pcm_24000']);
  });

  it('documents every audio route in /docs/json, each with its 401, and the speech stream with its audio types and headers', async () => {
    const doc = (await (await t.request('/docs/json')).json()) as { paths: Record<string, Record<string, any>> };
    const routes = Object.entries(doc.paths)
      .filter(([path]) => /^\/(v1|api\/svc\/v1)\/audio\//.test(path) && !path.includes('/realtime'))
      .flatMap(([path, operations]) => Object.entries(operations).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const));
    assert.deepEqual(routes.map(([route]) => route).sort(), [
      'DELETE /v1/audio/voices/{voiceIdOrAlias}',
      'GET /api/svc/v1/audio/generations',
      'GET /api/svc/v1/audio/generations/{id}',
      'GET /v1/audio/generations',
      'GET /v1/audio/generations/{id}',
      'GET /v1/audio/models',
      'GET /v1/audio/voice-library',
      'GET /v1/audio/voices',
      'POST /v1/audio/estimate',
      'POST /v1/audio/generations',
      'POST /v1/audio/speech',
      'POST /v1/audio/voices/import',
    ]);
    for (const [route, operation] of routes) assert.ok(operation.responses['401'], `${route} documents 401`);
    const create = doc.paths['/v1/audio/generations']!.post!;
    assert.deepEqual(Object.keys(create.responses).sort(), ['200', '400', '401', '402', '404', '409', '429', '503']);
    assert.ok(create.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'));
    const speech = doc.paths['/v1/audio/speech']!.post!;
    assert.deepEqual(Object.keys(speech.responses['200'].content).sort(), ['audio/L16;rate=24000;channels=1', 'audio/mpeg']);
    assert.ok(speech.responses['200'].headers['x-svc-task-id']);
    assert.ok(speech.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'));
  });

  it('shows audio tasks in the admin task list', async () => {
    const created = await createAudio(t, account, speechBody({ prompt: 'for the operators' }));
    await waitForAudio(t, account, created.body.id);
    const response = await t.request(`/admin/v1/tasks?kind=audio&workspaceId=${account.workspaceId}`, { admin: true });
    assert.equal(response.status, 200);
    const { items } = (await response.json()) as any;
    const row = items.find((i: any) => i.id === created.body.id);
    assert.ok(row, 'the task is listed');
    assert.equal(row.kind, 'audio');
    assert.equal(row.status, 'succeeded');
    assert.ok(items.every((i: any) => i.kind === 'audio'));
  });
});
