import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { SecretBox, SecretBoxError, secretKeyId } from './secret-box.js';

const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const SECRET = 'whsec_' + randomBytes(32).toString('base64url');

describe('SecretBox', () => {
  it('round-trips, and the envelope names the sealing key and hides the plaintext', () => {
    const box = SecretBox.fromBase64Keys(keyA);
    const sealed = box.seal(SECRET, 'webhook:1');
    const parts = sealed.split(':');
    assert.equal(parts.length, 5);
    assert.equal(parts[0], 'v1');
    assert.equal(parts[1], secretKeyId(Buffer.from(keyA, 'base64')));
    assert.equal(SecretBox.keyIdOf(sealed), box.currentKeyId);
    assert.ok(!sealed.includes(SECRET.slice(6)));
    assert.equal(box.open(sealed, 'webhook:1'), SECRET);
  });

  it('seals the same secret differently each time (fresh IV)', () => {
    const box = SecretBox.fromBase64Keys(keyA);
    assert.notEqual(box.seal(SECRET, 'x'), box.seal(SECRET, 'x'));
  });

  it('after a key rotation, envelopes of the previous key still open and new ones use the new key', () => {
    const old = SecretBox.fromBase64Keys(keyA).seal(SECRET, 'webhook:1');
    const rotated = SecretBox.fromBase64Keys(keyB, [keyA]);
    assert.equal(rotated.open(old, 'webhook:1'), SECRET);
    assert.equal(SecretBox.keyIdOf(rotated.seal(SECRET, 'webhook:1')), secretKeyId(Buffer.from(keyB, 'base64')));
    assert.notEqual(rotated.currentKeyId, SecretBox.keyIdOf(old));
  });

  it('refuses an envelope of a key no longer listed, another row, or altered bytes', () => {
    const sealed = SecretBox.fromBase64Keys(keyA).seal(SECRET, 'webhook:1');
    assert.throws(() => SecretBox.fromBase64Keys(keyB).open(sealed, 'webhook:1'), SecretBoxError);
    const box = SecretBox.fromBase64Keys(keyA);
    assert.throws(() => box.open(sealed, 'webhook:2'), SecretBoxError);
    const parts = sealed.split(':');
    const ct = Buffer.from(parts[4]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    parts[4] = ct.toString('base64url');
    assert.throws(() => box.open(parts.join(':'), 'webhook:1'), SecretBoxError);
    assert.throws(() => box.open('v2:x:y:z:w', 'webhook:1'), SecretBoxError);
    assert.throws(() => box.open(SECRET, 'webhook:1'), SecretBoxError);
  });

  it('refuses keys that are not 32 bytes', () => {
    assert.throws(() => SecretBox.fromBase64Keys(randomBytes(16).toString('base64')), SecretBoxError);
  });
});
