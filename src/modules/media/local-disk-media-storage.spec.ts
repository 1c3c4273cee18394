import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalDiskMediaStorage } from './local-disk-media-storage.js';
import { mediaStorageContract } from './media-storage.contract.js';

describe('LocalDiskMediaStorage', () => {
  let root: string;
  let storage: LocalDiskMediaStorage;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-media-unit-'));
    storage = new LocalDiskMediaStorage(root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const stagingDir = () => join(root, '.tmp');
  mediaStorageContract(() => ({
    storage,
    stagedCount: () => Promise.resolve(existsSync(stagingDir()) ? readdirSync(stagingDir()).length : 0),
    keepsReplacedVersionWhileOpen: true,
  }));

  it('keeps one file per key at <root>/<key>, and nothing else once a replacement is published', async () => {
    await storage.write('layout/x.bin', Buffer.from('one'));
    await storage.write('layout/x.bin', Buffer.from('two'));
    assert.equal(readFileSync(join(root, 'layout', 'x.bin'), 'utf8'), 'two');
    assert.deepEqual(readdirSync(join(root, 'layout')), ['x.bin']);
    assert.deepEqual(readdirSync(stagingDir()), []);
  });
});
