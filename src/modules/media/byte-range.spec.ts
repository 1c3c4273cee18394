import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decideRange } from './byte-range.js';

describe('decideRange', () => {
  const size = 100;
  const cases: Array<[string | undefined, ReturnType<typeof decideRange>]> = [
    [undefined, { kind: 'full' }],
    ['bytes=10-19', { kind: 'partial', start: 10, end: 19 }],
    ['bytes=0-0', { kind: 'partial', start: 0, end: 0 }],
    ['bytes=0-', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=90-', { kind: 'partial', start: 90, end: 99 }],
    ['bytes=99-99', { kind: 'partial', start: 99, end: 99 }],
    ['bytes=90-500', { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-10', { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-100', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=-5000', { kind: 'partial', start: 0, end: 99 }], // suffix longer than the object: all of it
    ['Bytes = 10-19 ', { kind: 'partial', start: 10, end: 19 }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=100-200', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=99999999999999999999999-', { kind: 'unsatisfiable' }],
    ['bytes=0-99999999999999999999999', { kind: 'partial', start: 0, end: 99 }],
    ['bytes=20-10', { kind: 'full' }], // invalid spec: ignored
    ['bytes=abc', { kind: 'full' }],
    ['bytes=1x-3', { kind: 'full' }],
    ['bytes=-', { kind: 'full' }],
    ['bytes=', { kind: 'full' }],
    ['bytes=0-1,5-6', { kind: 'full' }], // multiple ranges: whole body
    ['items=0-10', { kind: 'full' }],
    ['0-10', { kind: 'full' }],
  ];
  for (const [header, expected] of cases) {
    it(`${String(header)} on ${size} bytes → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(decideRange(header, size), expected);
    });
  }

  it('finds nothing to serve in an empty object', () => {
    assert.deepEqual(decideRange('bytes=0-', 0), { kind: 'unsatisfiable' });
    assert.deepEqual(decideRange('bytes=-1', 0), { kind: 'unsatisfiable' });
    assert.deepEqual(decideRange(undefined, 0), { kind: 'full' });
  });

  it('always yields a span inside the object', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(20_000), fc.option(fc.nat(20_000)), fc.boolean(), (sz, a, b, suffix) => {
        const header = suffix ? `bytes=-${a}` : `bytes=${a}-${b ?? ''}`;
        const d = decideRange(header, sz);
        if (d.kind === 'partial') return d.start >= 0 && d.start <= d.end && d.end < sz;
        if (d.kind === 'unsatisfiable') return suffix ? a === 0 || sz === 0 : a >= sz;
        return !suffix && b !== null && b < a;
      }),
    );
  });
});
