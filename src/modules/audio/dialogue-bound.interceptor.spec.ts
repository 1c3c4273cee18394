import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { of } from 'rxjs';
import { DomainError } from '../../../libs/common/index.js';
import { DialogueBoundInterceptor } from './dialogue-bound.interceptor.js';

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

describe('DialogueBoundInterceptor', () => {
  const interceptor = new DialogueBoundInterceptor();
  const next: CallHandler = { handle: () => of('handled') };

  it('refuses a dialogue of more than 100 entries with the DTO’s 400, reading none of them', () => {
    for (const length of [101, 30_000]) {
      assert.throws(
        () => interceptor.intercept(contextFor({ model: 'voice_v9', mode: 'text_to_dialogue', dialogue: untouchable(length) }), next),
        (error: unknown) => error instanceof DomainError && error.status === 400 && error.code === 'audio.invalid_field' && error.message === 'dialogue: must contain no more than 100 elements',
      );
    }
  });

  it('lets everything else through to the validation pipe', () => {
    const bodies: Array<[string, unknown]> = [
      ['100 entries', { dialogue: untouchable(100) }],
      ['dialogue not an array', { dialogue: 'not an array' }],
      ['no dialogue', { prompt: 'hi' }],
      ['an array body', []],
      ['null', null],
      ['no body', undefined],
      ['a string', 'text'],
    ];
    for (const [name, body] of bodies) {
      let handled = false;
      interceptor.intercept(contextFor(body), { handle: () => ((handled = true), of('handled')) });
      assert.equal(handled, true, name);
    }
  });
});
