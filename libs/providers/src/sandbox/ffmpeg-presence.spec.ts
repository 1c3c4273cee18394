import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FFMPEG_CHECK_INTERVAL_MS, FfmpegPresence } from './ffmpeg-presence.js';

describe('FfmpegPresence', () => {
  it('looks at the binary at most once per interval, and sees it come and go after that', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ffmpeg-presence-'));
    const path = join(dir, 'ffmpeg');
    let now = 1_000_000;
    const presence = new FfmpegPresence(path, () => now);
    try {
      assert.equal(presence.available, false);
      writeFileSync(path, '');
      assert.equal(presence.available, false, 'the last look is trusted within the interval');
      now += FFMPEG_CHECK_INTERVAL_MS;
      assert.equal(presence.available, true);
      rmSync(path);
      now += FFMPEG_CHECK_INTERVAL_MS - 1;
      assert.equal(presence.available, true);
      now += 1;
      assert.equal(presence.available, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is never available without a path', () => {
    assert.equal(new FfmpegPresence(null).available, false);
  });
});
