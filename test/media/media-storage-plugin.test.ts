import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../src/config/app-config.js';
import { LocalDiskMediaStorage } from '../../src/modules/media/local-disk-media-storage.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { type MediaBody, type MediaReadHandle, MediaStorage, type StagedMediaWrite } from '../../src/modules/media/media-storage.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/** A team's own driver, built by DI (it injects AppConfig): local disk that records what it is asked. */
@Injectable()
class RecordingStorage extends LocalDiskMediaStorage {
  readonly calls: string[] = [];

  constructor(config: AppConfig) {
    super(config.mediaDir);
  }

  override stage(key: string, body: MediaBody): Promise<StagedMediaWrite> {
    this.calls.push(`stage ${key}`);
    return super.stage(key, body);
  }

  override open(key: string): Promise<MediaReadHandle | null> {
    this.calls.push(`open ${key}`);
    return super.open(key);
  }
}

describe('MediaModule.forRoot({ storage }): a MediaStorage of your own through DI', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'mediaplugin', media: { storage: RecordingStorage } });
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  it('stores and serves every object through the plugged driver', async () => {
    const storage = t.app.get(MediaStorage);
    assert.ok(storage instanceof RecordingStorage);
    const key = `video/${account.workspaceId}/plugged.mp4`;
    const media = t.app.get(MediaService);
    await media.store({ key, body: Buffer.from('plugged bytes'), contentType: 'video/mp4', workspaceId: account.workspaceId });
    const response = await fetch((await media.signedLink(key)).url);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'plugged bytes');
    assert.deepEqual(storage.calls, [`stage ${key}`, `open ${key}`]);
  });
});
