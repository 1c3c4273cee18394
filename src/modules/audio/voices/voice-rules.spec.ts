import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { VoiceInfo } from '../../../../libs/providers/index.js';
import { isAlias, looksLikeOfficialId, refusal } from './voice-rules.js';

const voice = (extra: Partial<VoiceInfo> = {}): VoiceInfo => ({
  id: '21m00Tcm4TlvDq8ikWAM',
  name: 'Rachel',
  status: 'available',
  standardRate: true,
  category: 'premade',
  models: ['voice_v3', 'voice_v4'],
  ...extra,
});

describe('voice rules', () => {
  it('aliases: 1–64 of a-z 0-9 _ -, never shaped like an official id', () => {
    for (const alias of ['a', 'narrator', 'news_2-host', '0', 'x'.repeat(64), 'abcdefghij012345678', 'abcdefghij01234567890']) {
      assert.equal(isAlias(alias), true, alias);
    }
    for (const other of ['', 'Narrator', 'two words', 'x'.repeat(65), 'ümlaut', 'a.b', 'abcdefghij0123456789', '21m00Tcm4TlvDq8ikWAM']) {
      assert.equal(isAlias(other), false, other);
    }
  });

  it('official ids: exactly 20 base62 characters', () => {
    assert.equal(looksLikeOfficialId('21m00Tcm4TlvDq8ikWAM'), true);
    assert.equal(looksLikeOfficialId('abcdefghij0123456789'), true);
    for (const other of ['21m00Tcm4TlvDq8ikWA', '21m00Tcm4TlvDq8ikWAMx', '21m00Tcm4TlvDq8ikWA-', 'narrator']) assert.equal(looksLikeOfficialId(other), false, other);
  });

  it('refuses private, removed, custom-rate voices and a model the voice does not speak', () => {
    assert.equal(refusal(voice()), null);
    assert.equal(refusal(voice(), 'voice_v4'), null);
    assert.match(refusal(voice({ status: 'private' }))!, /private/);
    assert.match(refusal(voice({ status: 'removed' }))!, /removed/);
    assert.match(refusal(voice({ standardRate: false }))!, /custom rate/);
    assert.match(refusal(voice(), 'voice_v4_turbo')!, /does not speak voice_v4_turbo/);
  });
});
