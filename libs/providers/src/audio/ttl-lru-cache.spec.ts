import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtlLruCache } from './ttl-lru-cache.js';

describe('TtlLruCache', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = new TtlLruCache<number>(2, 1000, () => 0);
    cache.set('a', 1);
    cache.set('b', 2);
    assert.equal(cache.get('a'), 1); // a is now the most recent
    cache.set('c', 3);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual([cache.get('a'), cache.get('c')], [1, 3]);
  });

  it('forgets entries once their time is up, and keeps a cached null as a value', () => {
    let now = 0;
    const cache = new TtlLruCache<string | null>(10, 100, () => now);
    cache.set('gone', null);
    assert.equal(cache.get('gone'), null);
    assert.equal(cache.has('gone'), true);
    now = 100;
    assert.equal(cache.get('gone'), undefined);
    assert.equal(cache.size, 0);
  });
});
