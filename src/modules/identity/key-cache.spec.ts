import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CachedKey, decodeInvalidation, encodeInvalidation, KeyCache } from './key-cache.js';

const key = (id: string, workspaceId = 'ws-1'): CachedKey => ({ id, workspaceId, environment: 'live', status: 'active' });

/** A cache on a clock the test moves. */
function cacheAt(ttlMs: number, maxEntries?: number): { cache: KeyCache; advance: (ms: number) => void } {
  let now = 1_000_000;
  const cache = new KeyCache(ttlMs, () => now, maxEntries);
  return { cache, advance: (ms) => (now += ms) };
}

describe('KeyCache', () => {
  it('serves an entry until its TTL, then forgets it', () => {
    const { cache, advance } = cacheAt(30_000);
    assert.equal(cache.set('h1', key('k1'), cache.generation), true);
    advance(29_999);
    assert.deepEqual(cache.get('h1'), key('k1'));
    advance(1);
    assert.equal(cache.get('h1'), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped when met');
  });

  it('a hit does not extend the TTL', () => {
    const { cache, advance } = cacheAt(1000);
    cache.set('h1', key('k1'), cache.generation);
    advance(900);
    assert.ok(cache.get('h1'));
    advance(100);
    assert.equal(cache.get('h1'), undefined);
  });

  it('TTL 0 is off: nothing is kept', () => {
    const { cache } = cacheAt(0);
    assert.equal(cache.enabled, false);
    assert.equal(cache.set('h1', key('k1'), cache.generation), false);
    assert.equal(cache.get('h1'), undefined);
  });

  it('drops the write of a lookup that started before an invalidation (generation race)', () => {
    const { cache } = cacheAt(30_000);
    // A lookup reads the generation, then goes to the database …
    const startedAt = cache.generation;
    // … meanwhile the key is revoked and the invalidation applied (the cache had no entry yet).
    cache.invalidate({ keyId: 'k1' });
    // The lookup comes back with the row it read before the revocation: it must not be kept.
    assert.equal(cache.set('h1', key('k1'), startedAt), false);
    assert.equal(cache.get('h1'), undefined);
    // A lookup that starts after the invalidation reads the new state and may keep it.
    assert.equal(cache.set('h1', { ...key('k1'), status: 'revoked' }, cache.generation), true);
    assert.equal(cache.get('h1')?.status, 'revoked');
  });

  it('every kind of invalidation moves the generation on, unrelated ones included', () => {
    const { cache } = cacheAt(30_000);
    for (const what of [{ keyId: 'other' }, { workspaceId: 'other' }, 'all'] as const) {
      const startedAt = cache.generation;
      cache.invalidate(what);
      assert.equal(cache.set('h1', key('k1'), startedAt), false, JSON.stringify(what));
    }
  });

  it('forgets one key, a workspace, or everything', () => {
    const { cache } = cacheAt(30_000);
    const fill = () => {
      cache.clear();
      cache.set('a', key('ka', 'w1'), cache.generation);
      cache.set('b', key('kb', 'w1'), cache.generation);
      cache.set('c', key('kc', 'w2'), cache.generation);
    };
    const present = () => ['a', 'b', 'c'].filter((h) => cache.get(h));

    fill();
    cache.invalidate({ keyId: 'kb' });
    assert.deepEqual(present(), ['a', 'c']);
    fill();
    cache.invalidate({ workspaceId: 'w1' });
    assert.deepEqual(present(), ['c']);
    fill();
    cache.invalidate('all');
    assert.deepEqual(present(), []);
  });

  it('stays within its bound, evicting the least recently used', () => {
    const { cache } = cacheAt(30_000, 3);
    for (const h of ['a', 'b', 'c']) cache.set(h, key(`k${h}`), cache.generation);
    assert.ok(cache.get('a'), 'a is now the most recently used');
    cache.set('d', key('kd'), cache.generation);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('b'), undefined, 'b was the least recently used');
    assert.deepEqual(['a', 'c', 'd'].map((h) => cache.get(h)?.id), ['ka', 'kc', 'kd']);

    // Thousands of distinct keys never grow it past its bound.
    for (let i = 0; i < 5000; i++) cache.set(`x${i}`, key(`kx${i}`), cache.generation);
    assert.equal(cache.size, 3);
  });

  it('replacing an entry does not evict another', () => {
    const { cache } = cacheAt(30_000, 2);
    cache.set('a', key('ka'), cache.generation);
    cache.set('b', key('kb'), cache.generation);
    cache.set('a', { ...key('ka'), status: 'revoked' }, cache.generation);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a')?.status, 'revoked');
    assert.ok(cache.get('b'));
  });
});

describe('invalidation messages', () => {
  it('round-trip a key, a workspace and everything', () => {
    for (const what of [{ keyId: '0b6f6c57-4f5e-4a4b-9a59-0d2d9a3f9d10' }, { workspaceId: '9b2e1f10-1c1d-4a4b-8a59-0d2d9a3f9d11' }, 'all'] as const) {
      assert.deepEqual(decodeInvalidation(encodeInvalidation(what)), what);
    }
    assert.equal(encodeInvalidation({ keyId: 'k1' }), 'key:k1');
  });

  it('read anything unknown as "forget everything"', () => {
    for (const message of ['', 'nonsense', 'key:', 'tenant:x', 'key:a b']) assert.equal(decodeInvalidation(message), 'all', message);
  });
});
