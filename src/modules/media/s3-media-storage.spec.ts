import assert from 'node:assert/strict';
import { text } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { startS3Server, type TestS3Server } from '../../../test/support/s3-server.js';
import { mediaStorageContract } from './media-storage.contract.js';
import { S3MediaStorage } from './s3-media-storage.js';

/** The MediaStorage contract against a real S3-compatible server (s3rver, in process). */
describe('S3MediaStorage', () => {
  let s3: TestS3Server;
  let storage: S3MediaStorage;
  const prefix = 'deployment-a/';
  before(async () => {
    s3 = await startS3Server();
    // 5 MiB parts (S3's minimum), so the large-body case is a real three-part upload.
    storage = new S3MediaStorage(s3.storageOptions({ keyPrefix: prefix, partSizeBytes: 5 * 1024 * 1024 }));
  });
  after(async () => {
    storage.onModuleDestroy();
    await s3.close();
  });

  mediaStorageContract(() => ({
    storage,
    stagedCount: async () => (await s3.listKeys(`${prefix}.staging/`)).length,
    // s3rver, like an unversioned bucket, keeps no replaced version: the reader must fail, not mix.
    keepsReplacedVersionWhileOpen: false,
  }));

  it('keeps one object per key under the key prefix, and nothing else once a replacement is published', async () => {
    await storage.write('layout/x.bin', Buffer.from('one'));
    await storage.write('layout/x.bin', Buffer.from('two'));
    assert.deepEqual(await s3.listKeys(`${prefix}layout/`), [`${prefix}layout/x.bin`]);
    assert.deepEqual(await s3.listKeys(`${prefix}.staging/`), []);
    assert.equal(await text((await storage.open('layout/x.bin'))!.stream()), 'two');
  });

  it('answers no direct link unless presigned links are configured, and a working presigned GET when they are', async () => {
    await storage.write('linked/clip.mp4', Buffer.from('direct bytes'));
    assert.equal(await storage.directLink('linked/clip.mp4', { expiresInSeconds: 60, contentType: 'video/mp4' }), null);
    const presigning = new S3MediaStorage(s3.storageOptions({ keyPrefix: prefix, presignedLinks: true }));
    try {
      const url = (await presigning.directLink('linked/clip.mp4', { expiresInSeconds: 60, contentType: 'video/mp4' }))!;
      assert.ok(url.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}linked/clip.mp4?`), url);
      assert.match(url, /X-Amz-Algorithm=AWS4-HMAC-SHA256&.*X-Amz-Expires=60&.*X-Amz-Signature=[0-9a-f]{64}/);
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'video/mp4');
      assert.equal(await response.text(), 'direct bytes');
      // s3rver does not verify SigV4 signatures, so a tampered link is not tested here.
    } finally {
      presigning.onModuleDestroy();
    }
  });
});
