import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertValidMediaKey, InvalidMediaKeyError, isValidMediaKey } from './media-key.js';

describe('media keys', () => {
  it('accepts the keys domains build', () => {
    for (const key of [
      'video/0b9e2f43-6f3c-4c1b-9f7e-2a1d5c8e7b10/omni:7d0f4bb2-8c1e-4c43-a3a4-1f0f3c1b2a9e.mp4',
      'audio/ws/audio:1.mp3',
      'images/x/image:1-0.png',
      'a',
      'publicity/x.png',
      'x/public/y',
      'file.tar.gz',
      'under_score/-dash',
    ]) {
      assert.equal(isValidMediaKey(key), true, key);
    }
  });

  it('refuses traversal, absolute paths, dotfiles, odd characters and the public prefix', () => {
    for (const key of [
      '',
      '/abs',
      '../x',
      'a/../b',
      'a/./b',
      '..',
      '.',
      'a/.hidden',
      '.tmp/x.part',
      'a//b',
      'a/',
      'a\\b',
      'a b',
      'a%2fb',
      'a?b',
      'a#b',
      'é.png',
      'a\nb',
      'a\0b',
      'public/token',
      'public',
      'x'.repeat(513),
    ]) {
      assert.equal(isValidMediaKey(key), false, JSON.stringify(key));
      assert.throws(() => assertValidMediaKey(key), InvalidMediaKeyError);
    }
    assert.equal(isValidMediaKey(42), false);
  });
});
