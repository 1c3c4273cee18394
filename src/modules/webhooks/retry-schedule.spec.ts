import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextAttemptAt, parseRetryAfter, RETRY_OFFSETS_MS } from './retry-schedule.js';

const event = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(event.getTime() + ms);
const H = 3_600_000;

describe('retry schedule', () => {
  it('follows the offsets from the event while attempts are on time', () => {
    const expected = [10_000, 60_000, 300_000, 1_800_000, 2 * H, 5 * H, 10 * H, 15 * H, 20 * H];
    expected.forEach((offset, i) => {
      assert.deepEqual(nextAttemptAt(event, i + 1, at(RETRY_OFFSETS_MS[i]!)), at(offset), `after attempt ${i + 1}`);
    });
  });

  it('ends after the last offset and never schedules past 24 h', () => {
    assert.equal(nextAttemptAt(event, RETRY_OFFSETS_MS.length, at(20 * H)), null);
    assert.equal(nextAttemptAt(event, 3, at(24 * H)), null);
    assert.deepEqual(nextAttemptAt(event, 3, at(23 * H)), at(23 * H), 'a late attempt retries now, within the window');
  });

  it('honours Retry-After as a lower bound, within the window', () => {
    assert.deepEqual(nextAttemptAt(event, 1, at(0), 120_000), at(120_000));
    assert.deepEqual(nextAttemptAt(event, 1, at(0), 1_000), at(10_000));
    assert.equal(nextAttemptAt(event, 1, at(0), 25 * H), null);
  });

  it('reads Retry-After in seconds or as a date', () => {
    assert.equal(parseRetryAfter('30', event), 30_000);
    assert.equal(parseRetryAfter(new Date(event.getTime() + 5000).toUTCString(), event), 5000);
    assert.equal(parseRetryAfter('soon', event), undefined);
    assert.equal(parseRetryAfter(undefined, event), undefined);
  });
});
