import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { VideoRetention } from '../../src/modules/video/video-retention.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, download, getTask, waitForTerminal } from './support/video-helpers.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('video links and retention (injectable clock)', () => {
  let t: TestApp;
  let clock: ManualClock;
  let account: TestAccount;

  before(async () => {
    clock = new ManualClock(new Date());
    t = await bootTestApp({ label: 'videoretention', clock });
    account = await createAccount(t, { creditUsd: 10 });
  });
  after(async () => {
    await t.close();
  });

  it('renews signed links on every read, expires them within an hour, and ends retention after 7 days', async () => {
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'keep me', controls: { duration: 3 } });
    const done = await waitForTerminal(t, account, created.body.id);
    assert.equal(done.status, 'succeeded');
    const [row] = await t.db.query<{ completed_at: Date; media_key: string }>('SELECT completed_at, media_key FROM video_task WHERE id = $1', [done.id]);
    const completedAt = new Date(row!.completed_at).getTime();
    assert.equal(new Date(done.outputs.expiresAt!).getTime(), completedAt + 7 * DAY);

    const first = await getTask(t, account, done.id);
    const firstExpiry = new Date(first.outputs.urlsExpireAt!).getTime();
    assert.ok(firstExpiry <= clock.now().getTime() + HOUR && firstExpiry > clock.now().getTime());
    await download(first.outputs.videos[0]!);

    clock.advance(30 * 60_000);
    const second = await getTask(t, account, done.id);
    assert.equal(new Date(second.outputs.urlsExpireAt!).getTime(), firstExpiry + 30 * 60_000);

    clock.advance(HOUR);
    const stale = await fetch(first.outputs.videos[0]!);
    assert.notEqual(stale.status, 200, 'an expired signed link no longer serves the video');
    const third = await getTask(t, account, done.id);
    await download(third.outputs.videos[0]!);

    // Near the end of retention, links never outlive the media.
    clock.set(new Date(completedAt + 7 * DAY - 10 * 60_000));
    const last = await getTask(t, account, done.id);
    assert.ok(new Date(last.outputs.urlsExpireAt!).getTime() <= completedAt + 7 * DAY);

    clock.set(new Date(completedAt + 7 * DAY + 1000));
    const expired = await getTask(t, account, done.id);
    assert.equal(expired.status, 'succeeded');
    assert.deepEqual(expired.outputs.videos, []);
    assert.deepEqual(expired.outputs.images, []);
    assert.equal(expired.outputs.urlsExpireAt, undefined);
    assert.equal(expired.outputs.expiresAt, done.outputs.expiresAt);

    const swept = await t.app.get(VideoRetention).sweepExpiredMedia();
    assert.equal(swept, 1);
    assert.equal(await t.app.get(MediaService).exists(row!.media_key), false);
    const [after] = await t.db.query<{ media_deleted_at: Date | null }>('SELECT media_deleted_at FROM video_task WHERE id = $1', [done.id]);
    assert.ok(after!.media_deleted_at);
    assert.equal(await t.app.get(VideoRetention).sweepExpiredMedia(), 0);
  });
});
