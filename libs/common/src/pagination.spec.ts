import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from './errors/domain-error.js';
import { decodeCursor, encodeCursor } from './pagination.js';

const cursorOf = (raw: string): string => Buffer.from(raw, 'utf8').toString('base64url');

describe('cursors', () => {
  it('round-trips what encodeCursor writes', () => {
    const position = { createdAt: new Date('2026-11-24T13:21:23.854Z'), id: 'delivery:5565a442-d75b-46e8-83f3-284e06643dac' };
    assert.deepEqual(decodeCursor(encodeCursor(position)), position);
    assert.equal(decodeCursor(undefined), undefined);
    assert.equal(decodeCursor(''), undefined);
  });

  for (const [name, cursor] of [
    ['not base64 of anything', 'zzz'],
    ['no bar', cursorOf('2026-11-24T13:21:23.854Z')],
    ['no id', cursorOf('2026-11-24T13:21:23.854Z|')],
    ['not a time', cursorOf('yesterday|audio:x')],
    // Valid JavaScript dates that PostgreSQL cannot take (a 500 before): the extremes of Date's range.
    ['a time before year 0', cursorOf('-271821-04-20T00:00:00.000Z|delivery:x')],
    ['a time after year 9999', cursorOf('+275760-09-13T00:00:00.000Z|delivery:x')],
    ['a time not in toISOString form', cursorOf('2026-01-01|delivery:x')],
    // PostgreSQL refuses NUL in text (a 500 before).
    ['a NUL in the id', cursorOf('2026-11-24T13:21:23.854Z|a\u0000b')],
    ['a control character in the id', cursorOf('2026-11-24T13:21:23.854Z|a\nb')],
  ] as const) {
    it(`refuses ${name}: 400 naming the field`, () => {
      assert.throws(
        () => decodeCursor(cursor, 'after'),
        (err: unknown) => err instanceof DomainError && err.status === 400 && /after: malformed cursor/.test(err.message),
      );
    });
  }
});
