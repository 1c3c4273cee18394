import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MediaLinkSigner } from './media-link-signer.js';

const SECRET = 'unit-test-media-signing-key-0123456789abcdef';
const signer = new MediaLinkSigner(SECRET);
const KEY = 'video/ws-1/omni:7d0f4bb2-8c1e-4c43-a3a4-1f0f3c1b2a9e.mp4';
const EXP = 1_900_000_000;
const before = new Date((EXP - 1) * 1000);

describe('MediaLinkSigner', () => {
  it('signs base64url(HMAC-SHA256(secret, key + "\\n" + exp)) without padding', () => {
    const expected = createHmac('sha256', SECRET).update(`${KEY}\n${EXP}`).digest('base64url');
    const sig = signer.sign(KEY, EXP);
    assert.equal(sig, expected);
    assert.match(sig, /^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts its own signature until exp, then calls it expired', () => {
    const sig = signer.sign(KEY, EXP);
    assert.equal(signer.verify(KEY, String(EXP), sig, before), 'valid');
    assert.equal(signer.verify(KEY, String(EXP), sig, new Date(EXP * 1000 - 1)), 'valid');
    assert.equal(signer.verify(KEY, String(EXP), sig, new Date(EXP * 1000)), 'expired');
    assert.equal(signer.verify(KEY, String(EXP), sig, new Date((EXP + 3600) * 1000)), 'expired');
  });

  it('refuses a changed key, exp or signature', () => {
    const sig = signer.sign(KEY, EXP);
    assert.equal(signer.verify(`${KEY}x`, String(EXP), sig, before), 'invalid');
    assert.equal(signer.verify(KEY, String(EXP + 1), sig, before), 'invalid');
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    assert.equal(signer.verify(KEY, String(EXP), flipped, before), 'invalid');
  });

  it('refuses a signature made with another secret', () => {
    const other = new MediaLinkSigner('another-media-signing-key-0123456789abcdef');
    assert.equal(signer.verify(KEY, String(EXP), other.sign(KEY, EXP), before), 'invalid');
  });

  it('reports a forged but expired link as invalid, not expired', () => {
    const forged = 'A'.repeat(43);
    assert.equal(signer.verify(KEY, String(EXP), forged, new Date((EXP + 10) * 1000)), 'invalid');
  });

  it('refuses missing, repeated or malformed parameters', () => {
    const sig = signer.sign(KEY, EXP);
    for (const [exp, s] of [
      [undefined, sig],
      [String(EXP), undefined],
      [[String(EXP), String(EXP)], sig],
      [String(EXP), [sig, sig]],
      [`0${EXP}`, sig], // non-canonical number
      [`${EXP}.0`, sig],
      [`-${EXP}`, sig],
      ['', sig],
      [String(EXP), `${sig}=`], // padded
      [String(EXP), sig.slice(0, 42)],
      [String(EXP), Buffer.from(createHmac('sha256', SECRET).update(`${KEY}\n${EXP}`).digest()).toString('base64')], // std base64
    ] as Array<[unknown, unknown]>) {
      assert.equal(signer.verify(KEY, exp, s, before), 'invalid', `exp=${String(exp)} sig=${String(s)}`);
    }
  });

  it('never accepts a signature of a different (key, exp) pair', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.integer({ min: 0, max: 2 ** 34 }), fc.integer({ min: 0, max: 2 ** 34 }), (k1, k2, e1, e2) => {
        fc.pre(k1 !== k2 || e1 !== e2);
        const verdict = signer.verify(k2, String(e2), signer.sign(k1, e1), new Date(0));
        return verdict === 'invalid';
      }),
    );
  });

  it('refuses a short secret', () => {
    assert.throws(() => new MediaLinkSigner('short'));
  });
});
