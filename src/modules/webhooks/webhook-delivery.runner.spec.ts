import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judge } from './webhook-delivery.runner.js';

const eventCreatedAt = new Date('2026-01-01T00:00:00Z');
const now = new Date(eventCreatedAt.getTime() + 1000);
const automatic = { eventCreatedAt, manual: false };
const answered = (statusCode: number, retryAfter?: string) => ({ kind: 'answered' as const, statusCode, retryAfter, bodyStart: '' });

describe('judge (what an attempt leads to)', () => {
  it('2xx succeeds', () => {
    for (const code of [200, 202, 204, 299]) assert.deepEqual(judge(answered(code), automatic, 1, now), { status: 'succeeded', next: null, error: null });
  });

  it('5xx, 429, network errors and timeouts are retried at the next step', () => {
    for (const outcome of [answered(500), answered(503), answered(429), { kind: 'unreached' as const, retryable: true, error: 'timeout: x' }]) {
      const verdict = judge(outcome, automatic, 1, now);
      assert.equal(verdict.status, 'pending');
      assert.deepEqual(verdict.next, new Date(eventCreatedAt.getTime() + 10_000));
    }
  });

  it('3xx and other 4xx fail at once, as does a refused URL', () => {
    for (const outcome of [answered(301), answered(302), answered(400), answered(404), answered(410), { kind: 'unreached' as const, retryable: false, error: 'address_not_allowed: x' }]) {
      assert.equal(judge(outcome, automatic, 1, now).status, 'failed');
    }
    assert.match(judge(answered(302), automatic, 1, now).error!, /^redirect_not_followed/);
  });

  it('a manual attempt is the only one: a retryable failure fails it', () => {
    assert.equal(judge(answered(500), { eventCreatedAt, manual: true }, 3, now).status, 'failed');
  });

  it("429's Retry-After pushes the next attempt; past the 24 h window it fails", () => {
    assert.deepEqual(judge(answered(429, '60'), automatic, 1, now).next, new Date(now.getTime() + 60_000));
    const late = judge(answered(429, String(25 * 3600)), automatic, 1, now);
    assert.equal(late.status, 'failed');
    assert.match(late.error!, /retry_window_ended/);
  });
});
