import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError, ErrorDomains } from '../../../libs/common/index.js';
import { StrictValidationPipe } from '../../app/validation.pipe.js';
import { parseIdempotencyKey } from './audio-idempotency.js';
import { canonicalRequest, characterCount, validateAudioRequest } from './audio-rules.js';
import { CreateAudioGenerationDto } from './dto/create-audio-generation.dto.js';

const pipe = new StrictValidationPipe();
const V = 'JBFqnCBsd6RMkjVDRZzb';
const speech = (extra: Record<string, unknown> = {}) => ({ model: 'voice_v4', mode: 'text_to_speech', prompt: 'Hello.', controls: { voiceId: V }, ...extra });
const dialogue = (extra: Record<string, unknown> = {}) => ({ model: 'voice_v3', mode: 'text_to_dialogue', dialogue: [{ text: 'Hi.', voiceId: V }], ...extra });
const lines = (n: number, voices = 1, text = 'x') => Array.from({ length: n }, (_, i) => ({ text, voiceId: `voice${i % voices}` }));

/** The DTO (as the global pipe runs it), then the cross-field rules: what the controller does. */
async function validate(body: unknown) {
  const dto = (await pipe.transform(body, { type: 'body', metatype: CreateAudioGenerationDto })) as CreateAudioGenerationDto;
  return validateAudioRequest(dto);
}

/** [name, body, code as the client sees it on an audio route, field the message starts with] */
const REFUSALS: Array<[string, unknown, string, string]> = [
  ['missing model', { ...speech(), model: undefined }, 'audio.invalid_field', 'model'],
  ['unknown model', speech({ model: 'voice_v5' }), 'audio.invalid_field', 'model'],
  ['missing mode', { ...speech(), mode: undefined }, 'audio.invalid_field', 'mode'],
  ['unknown mode', speech({ mode: 'sing' }), 'audio.invalid_field', 'mode'],
  ['unknown top-level field', speech({ voice: V }), 'audio.unknown_field', 'voice'],
  ['unknown control', speech({ controls: { voiceId: V, speed: 1 } }), 'audio.unknown_field', 'controls.speed'],
  ['unknown provider namespace', speech({ providerOptions: { vendor: {} } }), 'audio.unknown_field', 'providerOptions.vendor'],
  ['unknown voice option', speech({ providerOptions: { voice: { stability: 1 } } }), 'audio.unknown_field', 'providerOptions.voice.stability'],
  ['unknown dialogue entry field', dialogue({ dialogue: [{ text: 'a', voiceId: V, speed: 1 }] }), 'audio.unknown_field', 'dialogue.0.speed'],
  ['non-string prompt', speech({ prompt: 5 }), 'audio.invalid_field', 'prompt'],
  ['speech without prompt', { ...speech(), prompt: undefined }, 'audio.invalid_field', 'prompt'],
  ['empty prompt', speech({ prompt: '' }), 'audio.invalid_field', 'prompt'],
  ['prompt of 2,001 characters', speech({ prompt: 'a'.repeat(2001) }), 'audio.text_too_long', 'prompt'],
  ['speech without voice', speech({ controls: {} }), 'audio.invalid_field', 'controls.voiceId'],
  ['empty voice', speech({ controls: { voiceId: '' } }), 'audio.invalid_field', 'controls.voiceId'],
  ['speech with dialogue', speech({ dialogue: [{ text: 'a', voiceId: V }] }), 'audio.invalid_field', 'dialogue'],
  ['controls not an object', speech({ controls: 'x' }), 'audio.invalid_field', 'controls'],
  ['output format wav', speech({ controls: { voiceId: V, outputFormat: 'wav' } }), 'audio.invalid_field', 'controls.outputFormat'],
  ['language code of one letter', speech({ controls: { voiceId: V, languageCode: 'e' } }), 'audio.invalid_field', 'controls.languageCode'],
  ['language code of four letters', speech({ controls: { voiceId: V, languageCode: 'engl' } }), 'audio.invalid_field', 'controls.languageCode'],
  ['language code with a digit', speech({ controls: { voiceId: V, languageCode: 'e1' } }), 'audio.invalid_field', 'controls.languageCode'],
  ['negative seed', speech({ providerOptions: { voice: { seed: -1 } } }), 'audio.invalid_field', 'providerOptions.voice.seed'],
  ['seed over 4294967295', speech({ providerOptions: { voice: { seed: 4294967296 } } }), 'audio.invalid_field', 'providerOptions.voice.seed'],
  ['fractional seed', speech({ providerOptions: { voice: { seed: 1.5 } } }), 'audio.invalid_field', 'providerOptions.voice.seed'],
  ['seed as string', speech({ providerOptions: { voice: { seed: '1' } } }), 'audio.invalid_field', 'providerOptions.voice.seed'],
  ['normalization yes', speech({ providerOptions: { voice: { applyTextNormalization: 'yes' } } }), 'audio.invalid_field', 'providerOptions.voice.applyTextNormalization'],
  ['webhook endpoint not a string', speech({ webhookEndpointId: 7 }), 'audio.invalid_field', 'webhookEndpointId'],
  ['turbo dialogue', dialogue({ model: 'voice_v4_turbo' }), 'audio.unsupported_mode', 'mode'],
  ['dialogue with prompt', dialogue({ prompt: 'x' }), 'audio.invalid_field', 'prompt'],
  ['dialogue with top-level voice', dialogue({ controls: { voiceId: V } }), 'audio.invalid_field', 'controls.voiceId'],
  ['dialogue without lines', { ...dialogue(), dialogue: undefined }, 'audio.invalid_field', 'dialogue'],
  ['empty dialogue', dialogue({ dialogue: [] }), 'audio.invalid_field', 'dialogue'],
  ['dialogue of 101 entries', dialogue({ dialogue: lines(101) }), 'audio.invalid_field', 'dialogue'],
  // Ten distinct voices are counted once aliases resolve (the service); written, at most twenty.
  ['dialogue of 21 distinct voices as written', dialogue({ dialogue: lines(21, 21) }), 'audio.invalid_field', 'dialogue'],
  ['dialogue over 2,000 characters in all', dialogue({ dialogue: lines(3, 1, 'a'.repeat(700)) }), 'audio.text_too_long', 'dialogue'],
  ['dialogue entry without voice', dialogue({ dialogue: [{ text: 'a' }] }), 'audio.invalid_field', 'dialogue.0.voiceId'],
  ['dialogue entry with empty text', dialogue({ dialogue: [{ text: '', voiceId: V }] }), 'audio.invalid_field', 'dialogue.0.text'],
  ['dialogue not an array', dialogue({ dialogue: { text: 'a', voiceId: V } }), 'audio.invalid_field', 'dialogue'],
  ['prompt of whitespace only', speech({ prompt: ' \n\t\u00a0 ' }), 'audio.invalid_field', 'prompt'],
  ['prompt with NUL', speech({ prompt: 'a\u0000b' }), 'audio.invalid_field', 'prompt'],
  ['prompt with a bell', speech({ prompt: 'a\u0007b' }), 'audio.invalid_field', 'prompt'],
  ['prompt with a lone high surrogate', speech({ prompt: 'a\ud800b' }), 'audio.invalid_field', 'prompt'],
  ['prompt with a lone low surrogate', speech({ prompt: 'a\udc00' }), 'audio.invalid_field', 'prompt'],
  ['dialogue line of whitespace only', dialogue({ dialogue: [{ text: 'Hi.', voiceId: V }, { text: '   ', voiceId: V }] }), 'audio.invalid_field', 'dialogue.1.text'],
  ['dialogue line with NUL', dialogue({ dialogue: [{ text: 'a\u0000', voiceId: V }] }), 'audio.invalid_field', 'dialogue.0.text'],
  ['dialogue line with a lone surrogate', dialogue({ dialogue: [{ text: '\udfff', voiceId: V }] }), 'audio.invalid_field', 'dialogue.0.text'],
  ['2,001 code points of e + combining accent', speech({ prompt: 'e\u0301'.repeat(1000) + 'e' }), 'audio.text_too_long', 'prompt'],
];

const audioRoutes = new ErrorDomains();
audioRoutes.register('audio', ['/v1/audio/']);

describe('audio generation request rules', () => {
  for (const [name, body, code, field] of REFUSALS) {
    it(`refuses ${name}: 400 ${code} naming ${field}`, async () => {
      await assert.rejects(validate(body), (error: unknown) => {
        assert.ok(error instanceof DomainError, String(error));
        assert.equal(error.status, 400);
        assert.equal(audioRoutes.qualify(error.code, '/v1/audio/generations'), code, error.message);
        assert.ok(error.message.startsWith(field), `"${error.message}" should name ${field}`);
        return true;
      });
    });
  }

  it('accepts the limits: 2,000 characters, 100 lines, ten voices, seed 4294967295, three-letter language', async () => {
    assert.equal((await validate(speech({ prompt: 'a'.repeat(2000) }))).inputCharacters, 2000);
    const full = await validate(dialogue({ dialogue: lines(100, 10, 'a'.repeat(20)) }));
    assert.equal(full.lines.length, 100);
    assert.equal(full.inputCharacters, 2000);
    const options = await validate(speech({ controls: { voiceId: V, languageCode: 'ENG', outputFormat: 'pcm_24000' }, providerOptions: { voice: { seed: 4294967295, applyTextNormalization: 'off' } } }));
    assert.deepEqual([options.languageCode, options.outputFormat, options.seed, options.applyTextNormalization], ['eng', 'pcm_24000', 4294967295, 'off']);
  });

  it('counts characters as code points (an emoji is one), whitespace and tags included', async () => {
    assert.equal(characterCount('😀 [laughs] a'), 12);
    assert.equal((await validate(speech({ prompt: '😀'.repeat(2000) }))).inputCharacters, 2000);
    // A combining mark is a code point of its own: "é" written e + U+0301 is two characters.
    assert.equal((await validate(speech({ prompt: 'e\u0301'.repeat(1000) }))).inputCharacters, 2000);
    // A ZWJ family emoji is seven code points (four people, three joiners).
    assert.equal(characterCount('👨‍👩‍👧‍👦'), 7);
    // Paired surrogates, tabs and line breaks are fine.
    assert.equal((await validate(speech({ prompt: 'Line one.\r\n\tLine two 👍' }))).inputCharacters, 22);
  });

  it('defaults the output format to MP3, and an omitted default hashes like the default written out', async () => {
    const omitted = await validate(speech());
    const written = await validate(speech({ controls: { voiceId: V, outputFormat: 'mp3_44100_128' } }));
    assert.equal(omitted.outputFormat, 'mp3_44100_128');
    assert.equal(canonicalRequest(omitted), canonicalRequest(written));
    assert.notEqual(canonicalRequest(omitted), canonicalRequest(await validate(speech({ prompt: 'Hello!' }))));
  });

  it('takes Idempotency-Key values of 1 to 128 printable non-space ASCII characters only', () => {
    assert.equal(parseIdempotencyKey(undefined), undefined);
    assert.equal(parseIdempotencyKey('a'.repeat(128)), 'a'.repeat(128));
    assert.equal(parseIdempotencyKey('order-42/~!{}'), 'order-42/~!{}');
    for (const bad of ['', 'a'.repeat(129), 'two words', 'tab\there', 'café', 'x\u007f', ['a', 'b']]) {
      assert.throws(() => parseIdempotencyKey(bad), (error: unknown) => error instanceof DomainError && error.status === 400 && error.code === 'audio.invalid_idempotency_key', JSON.stringify(bad));
    }
  });
});
