import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { AudioRetention } from '../../src/modules/audio/audio-retention.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { createAudio, download, getAudio, speechBody, voicesFor, waitForAudio } from './audio-helpers.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('audio links, retention and idempotency records (injectable clock)', () => {
  let t: TestApp;
  let clock: ManualClock;
  let account: TestAccount;

  fundedAppForSuite(
    () => {
      clock = new ManualClock(new Date());
      return { label: 'audioretention', clock, creditUsd: 5, environment: 'test' };
    },
    (booted) => ({ t, account } = booted),
  );

  it('renews signed links on every read (≤ 1 h), never past retention, and empties outputs after 7 days', async () => {
    const created = await createAudio(t, account, speechBody({ prompt: 'keep me for a week' }));
    const done = await waitForAudio(t, account, created.body.id);
    assert.equal(done.status, 'succeeded');
    const [row] = await t.db.query<{ completed_at: Date; expires_at: Date; media_key: string }>('SELECT completed_at, expires_at, media_key FROM audio_task WHERE id = $1', [done.id]);
    const completedAt = new Date(row!.completed_at).getTime();
    assert.equal(new Date(row!.expires_at).getTime(), completedAt + 7 * DAY);

    const first = await getAudio(t, account, done.id);
    const firstExpiry = new Date(first.outputs.audios[0]!.expiresAt).getTime();
    assert.ok(firstExpiry <= clock.now().getTime() + HOUR && firstExpiry > clock.now().getTime());
    await download(first.outputs.audios[0]!.url);

    clock.advance(30 * 60_000);
    const second = await getAudio(t, account, done.id);
    assert.equal(new Date(second.outputs.audios[0]!.expiresAt).getTime(), firstExpiry + 30 * 60_000);

    clock.advance(HOUR);
    assert.notEqual((await fetch(first.outputs.audios[0]!.url)).status, 200, 'an expired link no longer serves the audio');
    await download((await getAudio(t, account, done.id)).outputs.audios[0]!.url);

    clock.set(new Date(completedAt + 7 * DAY - 10 * 60_000));
    const last = await getAudio(t, account, done.id);
    assert.ok(new Date(last.outputs.audios[0]!.expiresAt).getTime() <= completedAt + 7 * DAY);

    clock.set(new Date(completedAt + 7 * DAY + 1000));
    const expired = await getAudio(t, account, done.id);
    assert.equal(expired.status, 'succeeded');
    assert.deepEqual(expired.outputs.audios, []);
    assert.equal(expired.usage.chargedUsd, done.usage.chargedUsd);

    const retention = t.app.get(AudioRetention);
    assert.ok((await retention.sweepExpiredMedia()) >= 1);
    assert.equal(await t.app.get(MediaService).exists(row!.media_key), false);
    const [swept] = await t.db.query<{ media_deleted_at: Date | null }>('SELECT media_deleted_at FROM audio_task WHERE id = $1', [done.id]);
    assert.ok(swept!.media_deleted_at);
    assert.equal(await retention.sweepExpiredMedia(), 0);
  });

  it('a streamed speech replays its stored audio under its key; once the audio is past retention the replay is 409 audio.replay_expired', async () => {
    clock.set(new Date());
    const body = { model: 'voice_v4', prompt: 'stream me once', controls: { voiceId: voicesFor('voice_v4')[0]!.id, outputFormat: 'pcm_24000' } };
    const speak = () => t.request('/v1/audio/speech', { method: 'POST', key: account.key, json: body, headers: { 'idempotency-key': 'speech-kept-a-week' } });
    const first = await speak();
    assert.equal(first.status, 200);
    const streamed = Buffer.from(await first.arrayBuffer());
    const id = first.headers.get('x-svc-task-id')!;
    assert.equal((await waitForAudio(t, account, id)).status, 'succeeded');
    const replay = await speak();
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(Buffer.from(await replay.arrayBuffer()), streamed);
    // The record outlives its 24 hours when the sweep has not run yet; the audio does not outlive its week.
    clock.advance(7 * DAY + HOUR);
    const expired = await speak();
    assert.equal(expired.status, 409);
    assert.equal(expired.headers.get('x-svc-task-id'), id);
    assert.equal(((await expired.json()) as { error: { code: string } }).error.code, 'audio.replay_expired');
    // Once swept, the key is new again (and the next test counts only its own record).
    assert.equal(await t.app.get(AudioRetention).sweepIdempotencyRecords(), 1);
  });

  it('keeps idempotency records 24 hours, then sweeps them (the key then makes a new task)', async () => {
    clock.set(new Date());
    const first = await createAudio(t, account, speechBody({ prompt: 'once a day' }), { 'idempotency-key': 'daily' });
    await waitForAudio(t, account, first.body.id);
    const retention = t.app.get(AudioRetention);
    clock.advance(23 * HOUR);
    await retention.sweepIdempotencyRecords();
    const replay = await createAudio(t, account, speechBody({ prompt: 'once a day' }), { 'idempotency-key': 'daily' });
    assert.equal(replay.body.id, first.body.id);
    assert.equal(replay.headers.get('idempotency-replay'), 'true');
    clock.advance(2 * HOUR);
    assert.equal(await retention.sweepIdempotencyRecords(), 1);
    const fresh = await createAudio(t, account, speechBody({ prompt: 'once a day' }), { 'idempotency-key': 'daily' });
    assert.equal(fresh.status, 200);
    assert.notEqual(fresh.body.id, first.body.id);
    await waitForAudio(t, account, fresh.body.id);
  });
});
