import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { looksLikeMp4 } from '../../libs/providers/index.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import { startS3Server, type TestS3Server } from '../support/s3-server.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, download, waitForTerminal } from './support/video-helpers.js';

/**
 * One video task end to end with MEDIA_DRIVER=s3 against a real S3-compatible server (s3rver in
 * process): the worker stores the MP4 in the bucket, the signed link serves it (whole and by
 * range) from there, and with presigned links configured the client downloads from the store.
 */
describe('video tasks with media on S3', () => {
  let s3: TestS3Server;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    s3 = await startS3Server();
  });
  fundedAppForSuite(() => ({ label: 'videos3', creditUsd: 10, env: { ...s3.env, MEDIA_S3_KEY_PREFIX: 'svc/' } }), (booted) => ({ t, account } = booted));
  after(async () => {
    await s3.close();
  });

  async function succeededTask(): Promise<{ id: string; link: string; key: string; bytes: number }> {
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'a red fox', controls: { duration: 3 } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.outputs.videos.length, 1);
    const [row] = await t.db.query<{ media_key: string; bytes: string }>(
      `SELECT v.media_key, m.bytes FROM video_task v JOIN media_object m ON m.key = v.media_key WHERE v.id = $1`,
      [task.id],
    );
    return { id: task.id, link: task.outputs.videos[0]!, key: row!.media_key, bytes: Number(row!.bytes) };
  }

  it('stores the MP4 in the bucket and serves it through the signed link, whole and by range', async () => {
    const task = await succeededTask();
    // The object is in the bucket under the prefix, and nothing is left staged; nothing went to MEDIA_DIR.
    assert.deepEqual(await s3.listKeys(`svc/${task.key}`), [`svc/${task.key}`]);
    assert.deepEqual(await s3.listKeys('svc/.staging/'), []);
    assert.ok(task.link.startsWith(`${t.config.publicBaseUrl}/media/${task.key}?exp=`), task.link);

    const mp4 = await download(task.link);
    assert.ok(looksLikeMp4(mp4), 'the download is an MP4');
    assert.equal(mp4.length, task.bytes);
    const range = await fetch(task.link, { headers: { range: 'bytes=4-11' } });
    assert.equal(range.status, 206);
    assert.equal(range.headers.get('content-range'), `bytes 4-11/${task.bytes}`);
    assert.deepEqual(Buffer.from(await range.arrayBuffer()), mp4.subarray(4, 12));

    // Tools that need a file path get a temporary copy, removed afterwards.
    const copied = await t.app.get(MediaService).withLocalFile(task.key, async (path) => {
      assert.equal(statSync(path).size, task.bytes);
      assert.deepEqual(readFileSync(path), mp4);
      return path;
    });
    assert.throws(() => statSync(copied), { code: 'ENOENT' });
  });

  it('hands out presigned store links instead when MEDIA_S3_PRESIGNED_LINKS is on', async () => {
    const presigning = await bootTestApp({ label: 'videos3p', db: t.db, env: { ...s3.env, APP_ROLE: 'api', MEDIA_S3_KEY_PREFIX: 'svc/', MEDIA_S3_PRESIGNED_LINKS: 'true' } });
    try {
      const task = await succeededTask();
      const response = await presigning.request(`/v1/contents/generations/tasks/${encodeURIComponent(task.id)}`, { key: account.key });
      const body = (await response.json()) as { outputs: { videos: string[]; urlsExpireAt: string } };
      const [link] = body.outputs.videos;
      assert.ok(link?.startsWith(`${s3.endpoint}/${s3.bucket}/svc/${task.key}?`), link);
      assert.match(link, /X-Amz-Signature=/);
      const expiresIn = Number(new URL(link).searchParams.get('X-Amz-Expires'));
      assert.ok(expiresIn > 3500 && expiresIn <= 3600, `X-Amz-Expires ${expiresIn}`);
      const direct = await fetch(link);
      assert.equal(direct.status, 200);
      assert.equal(direct.headers.get('content-type'), 'video/mp4');
      const mp4 = Buffer.from(await direct.arrayBuffer());
      assert.ok(looksLikeMp4(mp4));
      assert.equal(mp4.length, task.bytes);
    } finally {
      await presigning.close();
    }
  });
});
