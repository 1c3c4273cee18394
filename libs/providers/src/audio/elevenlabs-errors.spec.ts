import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyRefusal, classifyTransportError, retryAfterMs } from './elevenlabs-errors.js';

const detail = (status: string, message = 'upstream text with sk_secret') => JSON.stringify({ detail: { status, message } });

describe('ElevenLabs error mapping', () => {
  const cases: Array<[number, string, { retryable: boolean; unhealthy: boolean; reason: RegExp }]> = [
    [429, detail('too_many_concurrent_requests'), { retryable: true, unhealthy: false, reason: /concurrency limit/ }],
    [429, detail('system_busy'), { retryable: true, unhealthy: true, reason: /overloaded/ }],
    [429, 'not json', { retryable: true, unhealthy: false, reason: /rate limited/ }],
    [502, '<html>bad gateway</html>', { retryable: true, unhealthy: true, reason: /HTTP 502/ }],
    [401, detail('invalid_api_key'), { retryable: false, unhealthy: true, reason: /credentials/ }],
    [400, detail('quota_exceeded'), { retryable: false, unhealthy: true, reason: /quota/ }],
    [401, detail('detected_unusual_activity'), { retryable: false, unhealthy: true, reason: /credentials/ }],
    [400, detail('voice_not_found'), { retryable: false, unhealthy: false, reason: /^voice not found upstream$/ }],
    [401, detail('voice_not_found'), { retryable: false, unhealthy: false, reason: /^voice not found upstream$/ }],
    [401, detail('max_character_limit_exceeded'), { retryable: false, unhealthy: false, reason: /too long|longer/ }],
    [403, detail('only_for_creator+'), { retryable: false, unhealthy: false, reason: /plan/ }],
    [422, JSON.stringify({ detail: [{ loc: ['body', 'inputs', 0, 'voice_id'], msg: 'sk_secret', type: 'missing' }] }), { retryable: false, unhealthy: false, reason: /\(body\.inputs\.0\.voice_id\)$/ }],
    [400, JSON.stringify({ detail: { code: 'invalid_parameters', message: 'x' } }), { retryable: false, unhealthy: false, reason: /invalid/ }],
    [418, '', { retryable: false, unhealthy: false, reason: /HTTP 418/ }],
  ];
  for (const [status, body, expected] of cases) {
    it(`${status} ${body.slice(0, 60)}`, () => {
      const refusal = classifyRefusal(status, body, undefined, 1000);
      assert.equal(refusal.retryable, expected.retryable);
      assert.equal(refusal.unhealthy, expected.unhealthy);
      assert.match(refusal.reason, expected.reason);
      assert.doesNotMatch(refusal.reason, /sk_secret|bad gateway/);
      assert.equal(refusal.retryAfterMs, expected.retryable ? 1000 : undefined);
    });
  }

  it('reads Retry-After as seconds or an HTTP date, capped at five minutes', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(retryAfterMs('2', now), 2000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('86400', now), 300_000);
    assert.equal(retryAfterMs(['1.5'], now), 1500);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs('-1', now), undefined);
    assert.equal(retryAfterMs(undefined, now), undefined);
  });

  it('tells a request that never left from a lost answer', () => {
    assert.deepEqual(classifyTransportError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })), { sent: false, code: 'ECONNREFUSED' });
    assert.deepEqual(classifyTransportError({ cause: { code: 'ENOTFOUND' } }), { sent: false, code: 'ENOTFOUND' });
    assert.deepEqual(classifyTransportError(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' })), { sent: false, code: 'UND_ERR_CONNECT_TIMEOUT' });
    assert.deepEqual(classifyTransportError(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' })), { sent: true, code: 'UND_ERR_SOCKET' });
    assert.deepEqual(classifyTransportError(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' })), { sent: true, code: 'UND_ERR_HEADERS_TIMEOUT' });
    assert.deepEqual(classifyTransportError(new Error('no code')), { sent: true, code: 'network error' });
  });
});
