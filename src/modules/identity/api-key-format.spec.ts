import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checksumOf, generateApiKey, hashApiKey, parseApiKey } from './api-key-format.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_LENGTH = 'svc_live_'.length + 32 + 6;

describe('API key format', () => {
  it('generates keys that parse back to their environment and hash', () => {
    for (const environment of ['live', 'test'] as const) {
      for (let i = 0; i < 50; i++) {
        const generated = generateApiKey(environment);
        assert.match(generated.key, new RegExp(`^svc_${environment}_[0-9A-Za-z]{38}$`));
        assert.equal(generated.key.length, KEY_LENGTH);
        assert.equal(generated.prefix, generated.key.slice(0, 13));
        assert.deepEqual(generated.secretSha256, hashApiKey(generated.key));
        const parsed = parseApiKey(generated.key);
        assert.ok(parsed.ok, `${generated.key} should parse`);
        assert.equal(parsed.environment, environment);
        assert.deepEqual(parsed.sha256, generated.secretSha256);
      }
    }
  });

  it('keeps the checksum of published keys stable (CRC32 in 6 base62 digits)', () => {
    // CRC32 values checked independently (Python's zlib.crc32): 3585111259 and 2756452516.
    assert.equal(checksumOf(`svc_live_${'0'.repeat(32)}`), '3uclD9');
    assert.equal(checksumOf('svc_test_abcdefghijklmnopqrstuvwxyzABCDEF'), '30XnDY');
    assert.ok(parseApiKey(`svc_live_${'0'.repeat(32)}3uclD9`).ok);
    assert.ok(parseApiKey('svc_test_abcdefghijklmnopqrstuvwxyzABCDEF30XnDY').ok);
  });

  it('refuses every single-character change of a key, at every position', () => {
    let tried = 0;
    for (let n = 0; n < 10; n++) {
      const { key } = generateApiKey(n % 2 === 0 ? 'live' : 'test');
      for (let position = 0; position < key.length; position++) {
        for (const replacement of `${BASE62}_-. é`) {
          if (replacement === key[position]) continue;
          const changed = key.slice(0, position) + replacement + key.slice(position + 1);
          tried++;
          assert.equal(parseApiKey(changed).ok, false, `accepted ${changed} (position ${position} of ${key})`);
        }
      }
    }
    assert.ok(tried > 10 * KEY_LENGTH * 61);
  });

  it('refuses swapped neighbours, truncation, extension and case changes (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom('live' as const, 'test' as const), fc.nat({ max: KEY_LENGTH - 2 }), fc.constantFrom(...BASE62), (environment, position, extra) => {
        const { key } = generateApiKey(environment);
        const swapped = key.slice(0, position) + key[position + 1] + key[position] + key.slice(position + 2);
        if (swapped !== key) assert.equal(parseApiKey(swapped).ok, false, `swapped ${swapped}`);
        assert.equal(parseApiKey(key.slice(0, position + 1)).ok, false);
        assert.equal(parseApiKey(key + extra).ok, false);
        assert.equal(parseApiKey(extra + key).ok, false);
        assert.equal(parseApiKey(key.toUpperCase()).ok, false);
        assert.equal(parseApiKey(` ${key}`).ok, false);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses the wrong prefix even with a valid checksum over it', () => {
    const random = 'A'.repeat(32);
    for (const prefix of ['svc_prod_', 'sk_live_', 'svc_LIVE_', 'svc-live-', 'svc_live', 'svclive_']) {
      const body = prefix + random;
      const candidate = body + checksumOf(body);
      const parsed = parseApiKey(candidate);
      assert.equal(parsed.ok, false, candidate);
      assert.equal(parsed.ok ? '' : parsed.reason, 'malformed API key');
    }
    const bad = parseApiKey(`svc_live_${random}000000`);
    assert.equal(bad.ok ? '' : bad.reason, 'malformed API key (checksum mismatch)');
  });
});
