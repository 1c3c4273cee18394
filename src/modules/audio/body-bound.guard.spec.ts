import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecutionContext } from '@nestjs/common';
import { DomainError } from '../../../libs/common/index.js';
import { AUDIO_REQUEST_SHAPE, BodyBoundGuard, VOICE_IMPORT_SHAPE } from './body-bound.guard.js';

const contextFor = (body: unknown): ExecutionContext => ({ switchToHttp: () => ({ getRequest: () => ({ body }) }) }) as unknown as ExecutionContext;

/** An array of `length` entries that fails the test if anything reads one of them. */
function untouchable(length: number): unknown[] {
  return new Proxy(new Array<unknown>(length), {
    get(target, property, receiver) {
      if (typeof property === 'string' && /^\d+$/.test(property)) assert.fail(`entry ${property} was read`);
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
}

/** An object of `n` keys `k0`…, after the given fields. */
const crowded = (n: number, first: Record<string, unknown> = {}): Record<string, unknown> => ({ ...first, ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1])) });

const speech = { model: 'voice_v4', mode: 'text_to_speech', prompt: 'Hi', controls: { voiceId: 'P7HORSO8SSRA0uiYErvs' } };

describe('BodyBoundGuard', () => {
  const audio = new BodyBoundGuard(AUDIO_REQUEST_SHAPE);

  const refusals: Array<[string, BodyBoundGuard, unknown, string, string]> = [
    ['a dialogue of 101 entries (none read)', audio, { model: 'voice_v9', mode: 'text_to_dialogue', dialogue: untouchable(101) }, 'audio.invalid_field', 'dialogue: must contain no more than 100 elements'],
    ['a dialogue of 30,000 entries (none read)', audio, { dialogue: untouchable(30_000) }, 'audio.invalid_field', 'dialogue: must contain no more than 100 elements'],
    ['60,000 unknown top-level keys', audio, crowded(60_000, speech), 'audio.unknown_field', 'k0: unknown field'],
    ['a crowded object under an unknown key', audio, { ...speech, foo: crowded(100) }, 'audio.unknown_field', 'foo: unknown field'],
    ['crowded controls after its known fields', audio, { ...speech, controls: crowded(100, { voiceId: 'x', outputFormat: 'pcm_24000' }) }, 'audio.unknown_field', 'controls.k0: unknown field'],
    ['a crowded object as the prompt', audio, { ...speech, prompt: crowded(100) }, 'audio.invalid_field', 'prompt: must be a string'],
    ['a crowded object as the seed', audio, { ...speech, providerOptions: { voice: { seed: crowded(100) } } }, 'audio.invalid_field', 'providerOptions.voice.seed: must be an integer number'],
    ['a crowded dialogue line', audio, { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [{ text: 'a', voiceId: 'x' }, crowded(100, { text: 'b' })] }, 'audio.unknown_field', 'dialogue.1.k0: unknown field'],
    ['a crowded object as the dialogue', audio, { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: crowded(100) }, 'audio.invalid_field', 'dialogue: must be an array'],
    ['a crowded voice import', new BodyBoundGuard(VOICE_IMPORT_SHAPE), crowded(100, { voiceId: 'x', alias: 'y' }), 'audio.unknown_field', 'k0: unknown field'],
  ];
  for (const [name, guard, body, code, message] of refusals) {
    it(`refuses ${name} before the pipe: 400 ${code} "${message}"`, () => {
      assert.throws(
        () => guard.canActivate(contextFor(body)),
        (error: unknown) => {
          assert.ok(error instanceof DomainError, String(error));
          assert.deepEqual([error.status, error.code, error.message], [400, code, message]);
          return true;
        },
      );
    });
  }

  it('lets every body no DTO rule would find crowded through to the validation pipe, untouched', () => {
    const bodies: Array<[string, unknown]> = [
      ['a speech request', speech],
      ['100 dialogue entries', { dialogue: Array.from({ length: 100 }, () => ({ text: 'a', voiceId: 'x' })) }],
      ['a few unknown fields (the pipe names them)', { ...speech, stability: 0.5, controls: { voiceId: 'x', speed: 1 } }],
      ['64 keys in one object', crowded(64 - 4, speech)],
      ['a dialogue that is not an array', { dialogue: 'not an array' }],
      ['an array body', []],
      ['null', null],
      ['no body', undefined],
      ['a string', 'text'],
    ];
    for (const [name, body] of bodies) {
      assert.equal(audio.canActivate(contextFor(body)), true, name);
    }
  });
});
