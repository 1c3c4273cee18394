import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import 'reflect-metadata';
import {
  ADAPTER_REGISTRATION,
  type AdapterRegistration,
  ElevenLabsAudioAdapter,
  NoLiveAdapterError,
  ProviderRegistry,
  type ElevenLabsAudioOptions,
  type SpeechJobSpec,
  SpeechStreamError,
  VoiceCatalogueError,
} from '../../libs/providers/index.js';
import { fakeAudio, fakeSeconds, FakeElevenLabsServer, type FakeElevenLabsBehaviour } from '../fakes/elevenlabs-server.js';

const GEORGE = 'JBFqnCBsd6RMkjVDRZzb';
const ALICE = 'Aw4FAjKCGjjNkVhN1Xmq';

const speech = (text: string, overrides: Partial<SpeechJobSpec> = {}): SpeechJobSpec => ({
  taskId: 'audio:00000000-0000-4000-8000-000000000001',
  model: 'voice_v3',
  mode: 'text_to_speech',
  inputs: [{ text, voiceId: GEORGE }],
  outputFormat: 'mp3_44100_128',
  ...overrides,
});

const dialogue = (lines: Array<[string, string]>, overrides: Partial<SpeechJobSpec> = {}): SpeechJobSpec =>
  speech('', { mode: 'text_to_dialogue', inputs: lines.map(([voiceId, text]) => ({ voiceId, text })), ...overrides });

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer[]> {
  const seen: Buffer[] = [];
  for await (const chunk of chunks) seen.push(chunk);
  return seen;
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('elevenlabs audio adapter against the fake upstream', () => {
  let fake: FakeElevenLabsServer;
  let adapter: ElevenLabsAudioAdapter;
  const open: ElevenLabsAudioAdapter[] = [];
  const build = (options: Partial<ElevenLabsAudioOptions> = {}) => {
    const built = new ElevenLabsAudioAdapter({ apiKey: fake.apiKey, baseUrl: fake.baseUrl, retryBaseMs: 1234, ...options });
    open.push(built);
    return built;
  };

  before(async () => {
    fake = await new FakeElevenLabsServer().start();
    adapter = build();
  });
  after(async () => {
    await Promise.all(open.map((a) => a.close()));
    await fake.stop();
  });

  it('is the live elevenlabs adapter for every audio model, credentialled only with a key', () => {
    assert.equal(adapter.name, 'elevenlabs');
    assert.equal(adapter.live, true);
    assert.deepEqual([...adapter.models], ['voice_v3', 'voice_v4', 'voice_v4_turbo']);
    assert.equal(adapter.credentialled(), true);
    assert.equal(build({ apiKey: '' }).credentialled(), false);
  });

  it('registers under the audio capability: the registry routes live keys to it only while it has a key', () => {
    const registration = Reflect.getMetadata(ADAPTER_REGISTRATION, ElevenLabsAudioAdapter) as AdapterRegistration;
    assert.deepEqual(registration, { capability: 'audio' });
    const registry = new ProviderRegistry(new Map(), { sandboxForLiveKeys: false });
    registry.register(adapter, registration);
    for (const model of adapter.models) {
      assert.equal(registry.route({ capability: 'audio', model, environment: 'live' }), 'elevenlabs');
      assert.equal(registry.route({ capability: 'audio', model, environment: 'test' }), 'sandbox');
    }
    const keyless = new ProviderRegistry(new Map(), { sandboxForLiveKeys: false });
    keyless.register(build({ apiKey: '' }), registration);
    assert.throws(() => keyless.route({ capability: 'audio', model: 'voice_v4', environment: 'live' }), NoLiveAdapterError);
  });

  describe('synthesize', () => {
    it('speech: sends the snake_case body, output_format and xi-api-key; returns the audio and the billed characters', async () => {
      fake.next({ kind: 'success', billed: 77 });
      const text = 'Hello there, this is George speaking.';
      const outcome = await adapter.synthesize(speech(text, { languageCode: 'en', seed: 42, applyTextNormalization: 'off' }));
      assert.deepEqual(outcome, { kind: 'succeeded', audio: fakeAudio(text.length, 'mp3_44100_128'), billableCharacters: 77 });
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.method, 'POST');
      assert.equal(sent.path, `/v1/text-to-speech/${GEORGE}`);
      assert.deepEqual(sent.query, { output_format: ['mp3_44100_128'] });
      assert.equal(sent.headers['xi-api-key'], fake.apiKey);
      assert.equal(sent.headers['content-type'], 'application/json');
      assert.deepEqual(sent.body, { text, model_id: 'eleven_multilingual_v2', language_code: 'en', seed: 42, apply_text_normalization: 'off' });
    });

    it('pcm_24000: 2 × 24000 × seconds bytes; optional fields are left out; each model maps to its upstream model', async () => {
      for (const [model, upstream] of [
        ['voice_v3', 'eleven_multilingual_v2'],
        ['voice_v4', 'eleven_v3'],
        ['voice_v4_turbo', 'eleven_flash_v2_5'],
      ] as const) {
        const text = `A longer sentence for ${model}, so that it lasts more than one second of audio.`;
        const outcome = await adapter.synthesize(speech(text, { model, outputFormat: 'pcm_24000' }));
        assert.equal(outcome.kind, 'succeeded');
        assert.ok(outcome.kind === 'succeeded');
        assert.equal(outcome.audio.length, 2 * 24_000 * fakeSeconds(text.length));
        assert.equal(outcome.billableCharacters, text.length);
        const sent = fake.requests.at(-1)!;
        assert.deepEqual(sent.query, { output_format: ['pcm_24000'] });
        assert.deepEqual(sent.body, { text, model_id: upstream });
      }
    });

    it('dialogue: inputs with voice_id, eleven_v3 for voice_v3 and voice_v4; billed from character-cost when x-character-count is absent', async () => {
      for (const model of ['voice_v3', 'voice_v4'] as const) {
        fake.next({ kind: 'success', billingHeaders: 'character-cost', billed: 31 });
        const lines: Array<[string, string]> = [
          [GEORGE, '[giggling] Knock knock'],
          [ALICE, 'Who is there?'],
        ];
        const outcome = await adapter.synthesize(dialogue(lines, { model, seed: 7 }));
        assert.deepEqual(outcome, { kind: 'succeeded', audio: fakeAudio('[giggling] Knock knockWho is there?'.length, 'mp3_44100_128'), billableCharacters: 31 });
        const sent = fake.requests.at(-1)!;
        assert.equal(sent.path, '/v1/text-to-dialogue');
        assert.deepEqual(sent.query, { output_format: ['mp3_44100_128'] });
        assert.deepEqual(sent.body, {
          inputs: [
            { text: '[giggling] Knock knock', voice_id: GEORGE },
            { text: 'Who is there?', voice_id: ALICE },
          ],
          model_id: 'eleven_v3',
          seed: 7,
        });
      }
    });

    it('without billing headers the input length is billed', async () => {
      fake.next({ kind: 'success', billingHeaders: 'none', billed: 999 });
      const outcome = await adapter.synthesize(dialogue([[GEORGE, 'One.'], [ALICE, 'Two!']]));
      assert.equal(outcome.kind === 'succeeded' && outcome.billableCharacters, 'One.Two!'.length);
    });

    it('a turbo dialogue is refused without a request', async () => {
      const before = fake.requests.length;
      const outcome = await adapter.synthesize(dialogue([[GEORGE, 'Hi']], { model: 'voice_v4_turbo' }));
      assert.deepEqual(outcome, { kind: 'rejected', reason: 'voice_v4_turbo cannot speak a dialogue', retryable: false });
      assert.equal(fake.requests.length, before);
    });

    const refusals: Array<{ name: string; behaviour?: FakeElevenLabsBehaviour; voiceId?: string; expect: { reason: RegExp; retryable: boolean; retryAfterMs?: number } }> = [
      {
        name: '429 too_many_concurrent_requests honours Retry-After',
        behaviour: { kind: 'error', status: 429, detailStatus: 'too_many_concurrent_requests', retryAfter: '3' },
        expect: { reason: /concurrency limit/, retryable: true, retryAfterMs: 3000 },
      },
      {
        name: '429 system_busy without Retry-After waits the default',
        behaviour: { kind: 'error', status: 429, detailStatus: 'system_busy' },
        expect: { reason: /overloaded/, retryable: true, retryAfterMs: 1234 },
      },
      { name: '429 of another kind', behaviour: { kind: 'error', status: 429, detailStatus: 'rate_limit' }, expect: { reason: /rate limited/, retryable: true, retryAfterMs: 1234 } },
      { name: '500', behaviour: { kind: 'error', status: 500, detailStatus: 'internal_error' }, expect: { reason: /failed \(HTTP 500\)/, retryable: true, retryAfterMs: 1234 } },
      { name: '503', behaviour: { kind: 'error', status: 503, detailStatus: 'service_unavailable', retryAfter: '2' }, expect: { reason: /HTTP 503/, retryable: true, retryAfterMs: 2000 } },
      {
        name: '401 invalid_api_key',
        behaviour: { kind: 'error', status: 401, detailStatus: 'invalid_api_key', message: 'Invalid API key: sk_secret_123' },
        expect: { reason: /refused the gateway's credentials/, retryable: false },
      },
      {
        name: '401 quota_exceeded',
        behaviour: { kind: 'error', status: 401, detailStatus: 'quota_exceeded', message: 'Key sk_secret_123 has 12 credits left.' },
        expect: { reason: /quota is exhausted/, retryable: false },
      },
      {
        name: '401 missing_permissions',
        behaviour: { kind: 'error', status: 401, detailStatus: 'missing_permissions', message: 'sk_secret_123 lacks text_to_speech' },
        expect: { reason: /refused the gateway's credentials/, retryable: false },
      },
      { name: 'a voice the upstream does not know (its real 400)', voiceId: 'NoSuchVoice000000000', expect: { reason: /^voice not found upstream$/, retryable: false } },
      { name: '404 voice_not_found', behaviour: { kind: 'error', status: 404, detailStatus: 'voice_not_found' }, expect: { reason: /^voice not found upstream$/, retryable: false } },
      {
        name: 'max_character_limit_exceeded',
        behaviour: { kind: 'error', status: 400, detailStatus: 'max_character_limit_exceeded' },
        expect: { reason: /longer than the speech upstream's model accepts/, retryable: false },
      },
      { name: '403 plan gate', behaviour: { kind: 'error', status: 403, detailStatus: 'output_format_not_allowed' }, expect: { reason: /plan does not allow/, retryable: false } },
      { name: '422 list-shaped detail', behaviour: { kind: 'validation', fields: ['text', 'seed'] }, expect: { reason: /invalid \(body\.text, body\.seed\)$/, retryable: false } },
    ];
    for (const { name, behaviour, voiceId, expect } of refusals) {
      it(`refusal: ${name} → ${expect.retryable ? 'retryable' : 'final'}, one request, no upstream text`, async () => {
        if (behaviour) fake.next(behaviour);
        const before = fake.requests.length;
        const outcome = await adapter.synthesize(speech('Refuse me.', voiceId ? { inputs: [{ text: 'Refuse me.', voiceId }] } : {}));
        assert.equal(outcome.kind, 'rejected');
        assert.ok(outcome.kind === 'rejected');
        assert.match(outcome.reason, expect.reason);
        assert.doesNotMatch(outcome.reason, /sk_|credits left|secret/);
        assert.equal(outcome.retryable, expect.retryable);
        assert.equal(outcome.retryAfterMs, expect.retryAfterMs);
        assert.equal(fake.requests.length, before + 1);
      });
    }

    it('a lost answer (socket destroyed after the body) is uncertain and was sent exactly once', async () => {
      const before = fake.requests.length;
      const outcome = await adapter.synthesize(speech('Lose this fake:lose-answer'));
      assert.equal(outcome.kind, 'uncertain');
      assert.equal(fake.requests.length, before + 1);
    });

    it('an answer that never comes (headers timeout) is uncertain and was sent exactly once', async () => {
      const impatient = build({ synthesisTimeoutMs: 300 });
      fake.next({ kind: 'hang' });
      const before = fake.requests.length;
      const outcome = await impatient.synthesize(speech('Wait for me.'));
      assert.deepEqual(outcome, { kind: 'uncertain', reason: "the speech upstream's answer was lost (UND_ERR_HEADERS_TIMEOUT)" });
      assert.equal(fake.requests.length, before + 1);
    });

    it('audio cut off halfway is uncertain (generated and billed upstream, never resent)', async () => {
      fake.next({ kind: 'cut-body' });
      const before = fake.requests.length;
      const outcome = await adapter.synthesize(speech('Cut me off in the middle of a sentence, please.'));
      assert.equal(outcome.kind, 'uncertain');
      assert.equal(fake.requests.length, before + 1);
    });

    it('an unreachable upstream (connection refused) is a retryable rejection', async () => {
      const dead = build({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
      const outcome = await dead.synthesize(speech('Anyone?'));
      assert.deepEqual(outcome, { kind: 'rejected', reason: 'the speech upstream could not be reached (ECONNREFUSED)', retryable: true, retryAfterMs: 1234 });
    });

    it('audio over the byte cap fails cleanly, with what was billed (chunked and declared length)', async () => {
      const capped = build({ maxAudioBytes: 256 * 1024 });
      for (const declareLength of [false, true]) {
        fake.next({ kind: 'oversize', bytes: 2 * 1024 * 1024, declareLength });
        const outcome = await capped.synthesize(speech('Too long to keep.'));
        assert.deepEqual(outcome, {
          kind: 'rejected',
          reason: `the speech upstream's audio is larger than allowed (${256 * 1024} bytes)`,
          retryable: false,
          billableCharacters: 'Too long to keep.'.length,
        });
      }
      // The pool is still usable after the body was abandoned.
      assert.equal((await capped.synthesize(speech('Short.'))).kind, 'succeeded');
    });
  });

  describe('stream', () => {
    it('resolves on the headers and yields the audio in order, to the last byte', async () => {
      const text = 'Stream this sentence out to me in many little chunks, one after another, please.';
      const outcome = await adapter.stream(speech(text, { outputFormat: 'pcm_24000', model: 'voice_v4_turbo' }));
      assert.equal(outcome.kind, 'streaming');
      assert.ok(outcome.kind === 'streaming');
      const sent = fake.requests.at(-1)!;
      assert.equal(sent.path, `/v1/text-to-speech/${GEORGE}/stream`);
      assert.deepEqual(sent.query, { output_format: ['pcm_24000'] });
      assert.deepEqual(sent.body, { text, model_id: 'eleven_flash_v2_5' });
      const chunks = await collect(outcome.stream.chunks);
      assert.ok(chunks.length > 1, 'more than one chunk');
      assert.deepEqual(Buffer.concat(chunks), fakeAudio(text.length, 'pcm_24000'));
      assert.equal(outcome.stream.billableCharacters(), text.length);
    });

    it('an error status is the mapped rejection', async () => {
      fake.next({ kind: 'error', status: 429, detailStatus: 'too_many_concurrent_requests', retryAfter: '5' });
      assert.deepEqual(await adapter.stream(speech('Busy?')), {
        kind: 'rejected',
        reason: 'the speech upstream is at its concurrency limit',
        retryable: true,
        retryAfterMs: 5000,
      });
    });

    it('a stream that stalls past the read timeout throws SpeechStreamError after the chunks it got, with the billed characters', async () => {
      const impatient = build({ streamReadTimeoutMs: 400 });
      fake.next({ kind: 'slow-stream', chunks: 3, chunkBytes: 1000, pauseMs: 50 });
      const outcome = await impatient.stream(speech('Slowly now.'));
      assert.ok(outcome.kind === 'streaming');
      const seen: Buffer[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of outcome.stream.chunks) seen.push(chunk);
        })(),
        (error: unknown) => error instanceof SpeechStreamError && error.billableCharacters === 'Slowly now.'.length && /broke \(UND_ERR_BODY_TIMEOUT\)/.test(error.message),
      );
      assert.deepEqual(Buffer.concat(seen), Buffer.concat([1, 2, 3].map((n) => Buffer.alloc(1000, n))));
    });

    it('a stream cut by the upstream throws SpeechStreamError', async () => {
      fake.next({ kind: 'cut-body' });
      const outcome = await adapter.stream(speech('Cut the stream in the middle of it, thank you.'));
      assert.ok(outcome.kind === 'streaming');
      await assert.rejects(collect(outcome.stream.chunks), SpeechStreamError);
    });

    it('a stream over the byte cap throws SpeechStreamError', async () => {
      const capped = build({ maxAudioBytes: 128 * 1024 });
      fake.next({ kind: 'oversize', bytes: 1024 * 1024 });
      const outcome = await capped.stream(speech('Endless.'));
      assert.ok(outcome.kind === 'streaming');
      await assert.rejects(collect(outcome.stream.chunks), /larger than allowed/);
    });

    it('a lost stream answer is uncertain; a dialogue cannot be streamed', async () => {
      const before = fake.requests.length;
      assert.equal((await adapter.stream(speech('fake:lose-answer'))).kind, 'uncertain');
      assert.equal(fake.requests.length, before + 1);
      assert.deepEqual(await adapter.stream(dialogue([[GEORGE, 'a']])), { kind: 'rejected', reason: 'voice_v3 cannot speak a dialogue as a stream', retryable: false });
      assert.equal(fake.requests.length, before + 1);
    });
  });

  describe('recover', () => {
    it('cannot find a generation by our id: unknown, and a give-up window that fails the task', async () => {
      assert.deepEqual(await adapter.recover(), { kind: 'unknown' });
      assert.ok(adapter.reconcileDelayMs > 0 && adapter.reconcileGiveUpMs > adapter.reconcileDelayMs);
    });
  });

  describe('voices', () => {
    const standard = () => fake.library.filter((v) => v.rate === undefined && v.fiat_rate === undefined);

    it('lists the premade voices, then the shared library, in pages of 30 without custom-rate voices, mapping each field', async () => {
      const premade = fake.account.filter((v) => v.category === 'premade').map((v) => v.voice_id);
      const all = [...premade, ...standard().map((v) => v.voice_id)];
      assert.ok(all.length > 30 && all.length < 90);
      const pages = [];
      for (let page = 0; page < 4; page++) pages.push(await adapter.listVoices({ page, pageSize: 30 }));
      const sent = fake.requestsTo('/v1/shared-voices').at(-1)!;
      assert.equal(sent.query.page_size![0], '30');
      assert.deepEqual(sent.query.include_custom_rates, ['false']);
      assert.equal(sent.headers['xi-api-key'], fake.apiKey);
      assert.equal(fake.requestsTo('/v2/voices').length, 1, 'the premade voices are read once and kept');
      assert.deepEqual(
        pages.map((p) => [p.voices.map((v) => v.id), p.hasMore, p.totalCount]),
        [0, 1, 2, 3].map((page) => [all.slice(page * 30, page * 30 + 30), page * 30 + 30 < all.length, all.length]),
      );
      assert.deepEqual(pages[0]!.voices[0]!.category, 'premade');
      assert.deepEqual(pages[0]!.voices[premade.length], {
        id: 'SV01xQ7pLm2RtK9wZ4cY',
        name: 'Library Aria 01',
        status: 'available',
        standardRate: true,
        category: 'library',
        models: ['voice_v3', 'voice_v4', 'voice_v4_turbo'],
        description: 'A calm library voice number 01.',
        language: 'en',
        accent: 'american',
        gender: 'female',
        age: 'young',
        previewUrl: 'https://storage.example/previews/SV01.mp3',
      });
    });

    it('passes search and filters through, and keeps custom-rate voices out even if the upstream sends them', async () => {
      const page = await adapter.listVoices({ page: 0, pageSize: 30, language: 'de', gender: 'male', age: 'young', search: 'bruno' });
      assert.deepEqual(fake.requestsTo('/v1/shared-voices').at(-1)!.query, {
        page_size: ['30'],
        page: ['0'],
        include_custom_rates: ['false'],
        search: ['bruno'],
        language: ['de'],
        gender: ['male'],
        age: ['young'],
      });
      const expected = standard().filter((v) => v.language === 'de' && v.gender === 'male' && v.age === 'young' && /bruno/i.test(v.name!));
      assert.ok(expected.length > 0);
      assert.deepEqual(page.voices.map((v) => v.id), expected.map((v) => v.voice_id));

      // An upstream that ignores include_custom_rates: the adapter filters them itself.
      const custom = fake.library.find((v) => v.fiat_rate !== undefined)!;
      const saved = [...fake.library];
      fake.library.splice(0, fake.library.length, custom, standard()[0]!);
      fake.ignoreCustomRateFilter = true;
      try {
        const sent = await adapter.listVoices({ page: 0, pageSize: 30 });
        assert.deepEqual(sent.voices.filter((v) => v.category === 'library').map((v) => v.id), [saved[0]!.voice_id]);
      } finally {
        fake.ignoreCustomRateFilter = false;
        fake.library.splice(0, fake.library.length, ...saved);
      }
    });

    it('finds premade voices by name or id and by their labels, never the account\'s own clone', async () => {
      const byName = await adapter.listVoices({ page: 0, pageSize: 30, search: 'RACH' });
      assert.deepEqual(byName.voices.filter((v) => v.category === 'premade').map((v) => v.name), ['Rachel']);
      const british = await adapter.listVoices({ page: 0, pageSize: 30, language: 'en', gender: 'female', age: 'middle_aged', search: 'alice' });
      assert.deepEqual(british.voices.filter((v) => v.category === 'premade').map((v) => v.name), ['Alice']);
      const clone = await adapter.listVoices({ page: 0, pageSize: 30, search: 'Our clone' });
      assert.deepEqual(clone.voices, []);
    });

    it('getVoice: premade from /v2/voices, library from shared-voices, custom-rate, our own clone private, unknown null', async () => {
      const fresh = build();
      assert.deepEqual(await fresh.getVoice(GEORGE), {
        id: GEORGE,
        name: 'George',
        status: 'available',
        standardRate: true,
        category: 'premade',
        models: ['voice_v3', 'voice_v4', 'voice_v4_turbo'],
        language: 'en',
        accent: 'british',
        gender: 'male',
        age: 'middle_aged',
        previewUrl: `https://storage.example/premade/${GEORGE}.mp3`,
      });
      assert.deepEqual(fake.requests.at(-1)!.query, { voice_ids: [GEORGE] });
      assert.equal(fake.requests.at(-1)!.path, '/v2/voices');

      const library = await fresh.getVoice('SV05xQ7pLm2RtK9wZ4cY');
      assert.equal(library?.category, 'library');
      assert.equal(library?.status, 'available');
      assert.equal(library?.standardRate, true);
      assert.deepEqual(fake.requests.at(-1)!.query, { search: ['SV05xQ7pLm2RtK9wZ4cY'], page_size: ['30'], page: ['0'], include_custom_rates: ['true'] });

      const custom = await fresh.getVoice('SV10xQ7pLm2RtK9wZ4cY');
      assert.equal(custom?.standardRate, false);
      assert.equal((await fresh.getVoice('CLn0wnPrivateVoice01'))?.status, 'private');
      assert.equal(await fresh.getVoice('NoSuchVoice000000000'), null);
    });

    it('getVoice answers repeats from its cache and refuses malformed ids without asking', async () => {
      const fresh = build();
      const before = fake.requests.length;
      await fresh.getVoice(ALICE);
      assert.equal(await fresh.getVoice('NoSuchVoice000000001'), null);
      const asked = fake.requests.length;
      assert.equal(asked, before + 3); // Alice from /v2; the unknown id in /v2 then in the library
      assert.equal((await fresh.getVoice(ALICE))?.name, 'Alice');
      assert.equal(await fresh.getVoice('NoSuchVoice000000001'), null);
      assert.equal(await fresh.getVoice('../../v1/user?x=1'), null);
      assert.equal(fake.requests.length, asked);
    });

    it('a catalogue the upstream refuses throws VoiceCatalogueError with a clean reason', async () => {
      const wrongKey = build({ apiKey: 'sk_wrong_key' });
      await assert.rejects(wrongKey.listVoices({ page: 0, pageSize: 30 }), (error: unknown) => {
        return error instanceof VoiceCatalogueError && /credentials/.test(error.message) && !error.message.includes('sk_wrong_key');
      });
      const dead = build({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
      await assert.rejects(dead.getVoice(GEORGE), /could not be read \(ECONNREFUSED\)/);
    });

    it('previewSample is null: the library links its own samples', async () => {
      assert.equal(await adapter.previewSample(), null);
    });
  });

  describe('circuit breaker', () => {
    it('opens after five upstream failures in a row and closes on the next success', async () => {
      const flaky = build();
      for (let i = 0; i < 5; i++) {
        assert.equal(flaky.available(), true);
        fake.next({ kind: 'error', status: 500, detailStatus: 'internal_error' });
        assert.equal((await flaky.synthesize(speech('Fail.'))).kind, 'rejected');
      }
      assert.equal(flaky.available(), false);
      flaky.circuit.success();
      assert.equal(flaky.available(), true);
    });

    it('opens on refused credentials (every request would fail) and on an unreachable upstream, not on a refused request', async () => {
      const badKey = build({ apiKey: 'sk_wrong_key' });
      for (let i = 0; i < 5; i++) await badKey.synthesize(speech('Key?'));
      assert.equal(badKey.available(), false);

      const dead = build({ baseUrl: `http://127.0.0.1:${await closedPort()}` });
      for (let i = 0; i < 5; i++) await dead.synthesize(speech('Anyone?'));
      assert.equal(dead.available(), false);

      const fine = build();
      for (let i = 0; i < 6; i++) {
        fake.next({ kind: 'validation', fields: ['text'] });
        await fine.synthesize(speech('Bad.'));
      }
      assert.equal(fine.available(), true);
    });
  });
});
