import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { mp4DurationSeconds, sniffImage } from '../../libs/providers/index.js';
import { VideoMediaValidator } from '../../src/modules/video/video-media.validator.js';
import { SandboxVideoProvider } from '../../libs/providers/index.js';
import { eventually } from '../support/eventually.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { MediaFixtureServer } from './support/media-fixtures.js';
import { createTask, download, getTask, holdOf, wallet, waitForTerminal } from './support/video-helpers.js';

const BASE = 'vendor-omni-flash-preview';
const V11 = 'vendor-omni-1.1-flash-preview';

describe('video tasks on the sandbox: processing', () => {
  let t: TestApp;
  let media: MediaFixtureServer;
  let account: TestAccount;

  before(async () => {
    media = new MediaFixtureServer();
    await media.start();
  });
  fundedAppForSuite({ label: 'videoproc', creditUsd: 100 }, (booted) => ({ t, account } = booted));
  after(async () => {
    await media.stop();
  });

  async function succeeds(json: Record<string, unknown>, expect: { seconds: number; chargeUsd: number }) {
    const before = await wallet(t, account);
    const created = await createTask(t, account, json);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^omni:[0-9a-f-]{36}$/);
    assert.equal(created.body.status, 'queued');
    assert.deepEqual(created.body.outputs, { videos: [], images: [] });
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.outputs.videos.length, 1);
    assert.deepEqual(task.outputs.images, []);
    const mp4 = await download(task.outputs.videos[0]!);
    const seconds = mp4DurationSeconds(mp4);
    assert.ok(seconds !== null && Math.abs(seconds - expect.seconds) < 0.1, `duration ${seconds}`);
    const hold = await holdOf(t, task.id);
    assert.equal(hold.holds, 1);
    assert.equal(hold.status, 'settled');
    assert.equal(Number(hold.captured) / 1e6, expect.chargeUsd);
    const afterWallet = await wallet(t, account);
    assert.equal(Math.round((before.balanceUsd - afterWallet.balanceUsd) * 1e6) / 1e6, expect.chargeUsd);
    assert.equal(afterWallet.heldUsd, before.heldUsd);
    return task;
  }

  it('text_to_video on the base model: a playable MP4, charged on measured seconds', async () => {
    const task = await succeeds({ model: BASE, prompt: 'a red fox', controls: { duration: 3 } }, { seconds: 3, chargeUsd: 0.24 });
    const expiresAt = new Date(task.outputs.expiresAt!).getTime();
    const urlsExpireAt = new Date(task.outputs.urlsExpireAt!).getTime();
    assert.ok(urlsExpireAt - Date.now() <= 3600_000 + 5000);
    // Seven days after completion: the moment the task turned succeeded (its updatedAt).
    assert.equal(expiresAt, new Date(task.updatedAt).getTime() + 7 * 86400_000);
  });

  it('video_modify on the base model with a source video', async () => {
    await succeeds({ model: BASE, prompt: 'make it rain', assets: { sourceVideo: media.url('/clip.mp4') }, controls: { duration: 3 } }, { seconds: 3, chargeUsd: 0.24 });
  });

  it('image_first_frame on 1.1 at 360p', async () => {
    await succeeds(
      { model: V11, prompt: 'animate', assets: { firstFrameImage: media.url('/first.png') }, controls: { duration: 3, resolution: '360p' } },
      { seconds: 3, chargeUsd: 0.15 },
    );
  });

  it('image_first_last_frame on 1.1 (PNG first, JPEG last), 9:16', async () => {
    await succeeds(
      {
        model: V11,
        prompt: 'morph',
        mode: 'image_first_last_frame',
        assets: { firstFrameImage: media.url('/first.png'), lastFrameImage: media.url('/last.jpg') },
        controls: { duration: 3, ratio: '9:16', resolution: '360p' },
      },
      { seconds: 3, chargeUsd: 0.15 },
    );
  });

  it('multimodal_reference on 1.1 with reference images (WebP, untyped PNG) and a reference video', async () => {
    await succeeds(
      {
        model: V11,
        prompt: 'in this style',
        assets: { referenceImages: [media.url('/ref.webp'), media.url('/untyped.png')], referenceVideos: [media.url('/clip.mp4')] },
        controls: { duration: 4, resolution: '360p' },
      },
      { seconds: 4, chargeUsd: 0.2 },
    );
  });

  it('video_extend on 1.1 at 1080p', async () => {
    await succeeds(
      { model: V11, prompt: 'continue', mode: 'video_extend', assets: { sourceVideo: media.url('/clip.mp4') }, controls: { duration: 3, resolution: '1080p' } },
      { seconds: 3, chargeUsd: 0.45 },
    );
  });

  it('text_to_video on 1.1 at 720p with the default duration (5 s)', async () => {
    await succeeds({ model: V11, prompt: 'defaults' }, { seconds: 5, chargeUsd: 0.5 });
  });

  for (const [name, assets, reason] of [
    ['a 404 image', { firstFrameImage: '/missing.png' }, /assets.firstFrameImage: could not be fetched \(HTTP 404\)/],
    ['a non-image', { firstFrameImage: '/text.png' }, /not a JPEG, PNG or WebP image/],
    ['a lying Content-Type', { firstFrameImage: '/lying.png' }, /served as image\/gif/],
    ['an image over 20 MiB', { firstFrameImage: '/huge.png' }, /larger than 20 MiB/],
    ['a video over 64 MiB', { sourceVideo: '/huge.mp4' }, /larger than 64 MiB/],
    ['a video over 10 s', { sourceVideo: '/long.mp4' }, /12\.\d+ s long/],
    ['an image served as a video', { sourceVideo: '/image-as-video.mp4' }, /not an MP4 video/],
    ['an undecodable WebP', { firstFrameImage: '/broken.webp' }, /WebP image that could not be decoded/],
    ['a WebP whose PNG conversion exceeds 20 MiB', { firstFrameImage: '/huge-png.webp' }, /PNG conversion is larger than 20 MiB/],
  ] as const) {
    it(`invalid media (${name}) fails the task and releases the hold; nothing is sent upstream`, async () => {
      const before = await wallet(t, account);
      const fullAssets = Object.fromEntries(Object.entries(assets).map(([k, v]) => [k, media.url(v)]));
      const created = await createTask(t, account, { model: V11, prompt: 'x', assets: fullAssets, controls: { duration: 3 } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const task = await waitForTerminal(t, account, created.body.id);
      assert.equal(task.status, 'failed');
      assert.match(task.failureReason ?? '', reason);
      assert.deepEqual(task.outputs.videos, []);
      assert.equal((await holdOf(t, task.id)).status, 'released');
      assert.deepEqual(await wallet(t, account), before);
      assert.equal(t.app.get(SandboxVideoProvider).submissions.get(task.id), undefined);
    });
  }

  it('a WebP image is sent upstream as the PNG it converts to (rule 5); JPEG and PNG pass unchanged', async () => {
    const prepared = await t.app.get(VideoMediaValidator).prepare(account.workspaceId, {
      prompt: 'x',
      mode: 'multimodal_reference',
      assets: { referenceImages: [media.url('/ref.webp'), media.url('/last.jpg'), media.url('/first.png')] },
      controls: { duration: 3, resolution: '720p', ratio: '16:9', generateAudio: true, outputCount: 1 },
    });
    assert.deepEqual(
      prepared.map((a) => a.mimeType),
      ['image/png', 'image/jpeg', 'image/png'],
    );
    assert.equal(sniffImage(prepared[0]!.bytes!), 'image/png');
    const size = await sharp(prepared[0]!.bytes!).metadata();
    assert.deepEqual([size.format, size.width, size.height], ['png', 64, 36]);
  });

  it('gs:// media: refused outside registered prefixes, accepted under one, JPEG/PNG only', async () => {
    const unregistered = await createTask(t, account, { model: V11, prompt: 'x', assets: { firstFrameImage: 'gs://acme-media/frames/a.png' }, controls: { duration: 3 } });
    assert.equal(unregistered.status, 200);
    const failed = await waitForTerminal(t, account, unregistered.body.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.failureReason ?? '', /outside the prefixes registered/);
    assert.equal((await holdOf(t, failed.id)).status, 'released');

    const register = await t.request(`/admin/v1/workspaces/${account.workspaceId}/gcs-prefixes`, { method: 'POST', admin: true, json: { prefix: 'gs://acme-media/frames/' } });
    assert.equal(register.status, 200);
    const listed = (await (await t.request(`/admin/v1/workspaces/${account.workspaceId}/gcs-prefixes`, { admin: true })).json()) as { items: Array<{ prefix: string }> };
    assert.deepEqual(listed.items.map((i) => i.prefix), ['gs://acme-media/frames/']);

    const ok = await createTask(t, account, { model: V11, prompt: 'x', assets: { firstFrameImage: 'gs://acme-media/frames/a.png' }, controls: { duration: 3, resolution: '360p' } });
    assert.equal((await waitForTerminal(t, account, ok.body.id)).status, 'succeeded');

    const webp = await createTask(t, account, { model: V11, prompt: 'x', assets: { firstFrameImage: 'gs://acme-media/frames/a.webp' }, controls: { duration: 3 } });
    const webpTask = await waitForTerminal(t, account, webp.body.id);
    assert.equal(webpTask.status, 'failed');
    assert.match(webpTask.failureReason ?? '', /JPEG or PNG/);
  });

  it('[sandbox:fail]: the upstream failure fails the task and releases the hold', async () => {
    const before = await wallet(t, account);
    const created = await createTask(t, account, { model: BASE, prompt: 'boom [sandbox:fail]', controls: { duration: 3 } });
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'failed');
    assert.match(task.failureReason ?? '', /failed to generate/);
    assert.equal((await holdOf(t, task.id)).status, 'released');
    assert.deepEqual(await wallet(t, account), before);
  });

  it('[sandbox:uncertain]: the lost acceptance goes through reconciliation, is looked up and never resent', async () => {
    const created = await createTask(t, account, { model: BASE, prompt: 'lost answer [sandbox:uncertain]', controls: { duration: 3 } });
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded');
    const [row] = await t.db.query<{ reconciled_at: Date | null; submit_attempts: number }>('SELECT reconciled_at, submit_attempts FROM video_task WHERE id = $1', [task.id]);
    assert.ok(row!.reconciled_at, 'the task went through reconciliation');
    assert.equal(row!.submit_attempts, 1);
    assert.equal(t.app.get(SandboxVideoProvider).submissions.get(task.id), 1);
    const hold = await holdOf(t, task.id);
    assert.equal(hold.status, 'settled');
    assert.equal(hold.captured, 240_000n);
  });

  it('[sandbox:delay]: polling shows running, then succeeded', async () => {
    const created = await createTask(t, account, { model: BASE, prompt: 'slow [sandbox:delay=1500]', controls: { duration: 3 } });
    // A worker picks the task up; 1.5 s of upstream delay keep it running while the client looks.
    const mid = await eventually(() => getTask(t, account, created.body.id), (task) => task.status !== 'queued', 'a worker picking the task up');
    assert.equal(mid.status, 'running');
    assert.equal((await waitForTerminal(t, account, created.body.id)).status, 'succeeded');
  });

  it('the admin task list shows video tasks', async () => {
    const response = await t.request(`/admin/v1/tasks?kind=video&workspaceId=${account.workspaceId}`, { admin: true });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { items: Array<{ kind: string; id: string }> };
    assert.ok(body.items.length > 0);
    assert.ok(body.items.every((i) => i.kind === 'video' && i.id.startsWith('omni:')));
  });
});
