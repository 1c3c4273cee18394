import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SANDBOX_DELAY_MS, parseSandboxDirectives, stripSandboxDirectives } from './directives.js';

describe('sandbox directives', () => {
  it('reads nothing from plain text', () => {
    assert.deepEqual(parseSandboxDirectives('a cat on a sofa'), { fail: false, delayMs: 0, uncertain: false, rejectCode: null });
  });

  it('reads every directive, across several texts', () => {
    assert.deepEqual(parseSandboxDirectives('x [sandbox:fail] y', undefined, '[sandbox:delay=250][sandbox:uncertain] [sandbox:reject=1301]'), {
      fail: true,
      delayMs: 250,
      uncertain: true,
      rejectCode: 1301,
    });
  });

  it('caps the delay', () => {
    assert.equal(parseSandboxDirectives('[sandbox:delay=999999999]').delayMs, MAX_SANDBOX_DELAY_MS);
  });

  it('ignores malformed directives', () => {
    assert.deepEqual(parseSandboxDirectives('[sandbox:explode] [sandbox:delay=] [sandbox:reject=abc] [Sandbox:fail]'), {
      fail: false,
      delayMs: 0,
      uncertain: false,
      rejectCode: null,
    });
  });

  it('strips directives from the text a sandbox model reads', () => {
    assert.equal(stripSandboxDirectives('a cat [sandbox:delay=5] on a sofa [sandbox:fail]'), 'a cat on a sofa');
  });
});
