import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../libs/common/index.js';
import { TextUpstreamError } from '../../../libs/providers/index.js';
import { toDomainError } from './upstream-error-mapping.js';

/** How an upstream failure reaches the client: status, code, Retry-After. */
describe('text upstream error mapping (toDomainError)', () => {
  const cases: Array<[string, TextUpstreamError, number, string, Record<string, string>]> = [
    ['400 INVALID_ARGUMENT', new TextUpstreamError(400, 'INVALID_ARGUMENT', 'bad'), 400, 'text.upstream_rejected', {}],
    ['429 with a retry delay', new TextUpstreamError(429, 'RESOURCE_EXHAUSTED', 'quota', 7), 429, 'text.upstream_rate_limited', { 'retry-after': '7' }],
    ['429 without', new TextUpstreamError(429, 'RESOURCE_EXHAUSTED', 'quota'), 429, 'text.upstream_rate_limited', {}],
    ['503 UNAVAILABLE', new TextUpstreamError(503, 'UNAVAILABLE', 'busy', 2), 503, 'text.upstream_unavailable', { 'retry-after': '2' }],
    ['504 DEADLINE_EXCEEDED', new TextUpstreamError(504, 'DEADLINE_EXCEEDED', 'slow'), 504, 'text.upstream_timeout', {}],
    ['500 INTERNAL', new TextUpstreamError(500, 'INTERNAL', 'oops'), 502, 'text.upstream_error', {}],
    ['403 PERMISSION_DENIED (our credential)', new TextUpstreamError(403, 'PERMISSION_DENIED', 'key'), 502, 'text.upstream_error', {}],
    ['a stream cut halfway', new TextUpstreamError(200, 'STREAM_INTERRUPTED', 'cut'), 502, 'text.stream_interrupted', {}],
  ];
  for (const [name, error, status, code, headers] of cases) {
    it(`${name} → ${status} ${code}`, () => {
      const mapped = toDomainError(error);
      assert.ok(mapped instanceof DomainError);
      assert.equal(mapped.status, status);
      assert.equal(mapped.code, code);
      assert.deepEqual(mapped.headers, headers);
      assert.equal(mapped.message, `upstream: ${error.message}`);
    });
  }

  it('anything else passes through unchanged', () => {
    const other = new Error('not an upstream error');
    assert.equal(toDomainError(other), other);
  });
});
