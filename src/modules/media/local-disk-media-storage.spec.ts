import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, it } from 'node:test';
import { LocalDiskMediaStorage } from './local-disk-media-storage.js';
import { InvalidMediaKeyError } from './media-key.js';

describe('LocalDiskMediaStorage', () => {
  let root: string;
  let storage: LocalDiskMediaStorage;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-media-unit-'));
    storage = new LocalDiskMediaStorage(root);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('writes buffers, streams and files under the key and reads them back', async () => {
    assert.deepEqual(await storage.write('a/buffer.bin', Buffer.from('from a buffer')), { bytes: 13 });
    assert.deepEqual(await storage.write('a/stream.bin', Readable.from([Buffer.from('from '), Buffer.from('a stream')])), { bytes: 13 });
    const source = join(root, '..', `${root.split('/').pop()}-source`);
    writeFileSync(source, 'from a file');
    try {
      assert.deepEqual(await storage.write('a/file.bin', { path: source }), { bytes: 11 });
    } finally {
      rmSync(source, { force: true });
    }
    assert.equal(readFileSync(join(root, 'a', 'stream.bin'), 'utf8'), 'from a stream');
    const handle = await storage.open('a/file.bin');
    assert.equal(handle?.bytes, 11);
    assert.equal(await text(handle!.stream({ start: 5, end: 10 })), 'a file');
    assert.equal(storage.localPath('a/file.bin'), join(root, 'a', 'file.bin'));
  });

  it('publishes nothing until commit, and nothing at all when discarded', async () => {
    const staged = await storage.stage('b/staged.bin', Buffer.from('staged'));
    assert.equal(staged.bytes, 6);
    assert.equal(await storage.stat('b/staged.bin'), null);
    await staged.commit();
    assert.equal((await storage.stat('b/staged.bin'))?.bytes, 6);
    const dropped = await storage.stage('b/dropped.bin', Buffer.from('dropped'));
    await dropped.discard();
    assert.equal(await storage.stat('b/dropped.bin'), null);
    assert.deepEqual(readdirSync(join(root, '.tmp')), []);
  });

  it('replaces an object atomically; an open reader keeps the version it opened', async () => {
    await storage.write('c/x.bin', Buffer.from('version one'));
    const reader = await storage.open('c/x.bin');
    const before = await storage.stat('c/x.bin');
    await storage.write('c/x.bin', Buffer.from('two'));
    assert.equal(await text(reader!.stream()), 'version one');
    const afterStat = await storage.stat('c/x.bin');
    assert.equal(afterStat?.bytes, 3);
    assert.notEqual(afterStat?.version, before?.version);
    assert.deepEqual(readdirSync(join(root, 'c')), ['x.bin']);
  });

  it('leaves no trace of a stream that fails midway', async () => {
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(1000);
        throw new Error('boom');
      })(),
    );
    await assert.rejects(storage.stage('d/failed.bin', failing), /boom/);
    assert.equal(await storage.stat('d/failed.bin'), null);
    assert.deepEqual(readdirSync(join(root, '.tmp')), []);
  });

  it('deletes idempotently and answers null for missing objects', async () => {
    await storage.write('e/gone.bin', Buffer.from('x'));
    assert.equal(await storage.delete('e/gone.bin'), true);
    assert.equal(await storage.delete('e/gone.bin'), false);
    assert.equal(await storage.open('e/gone.bin'), null);
    assert.equal(await storage.open('e'), null); // a folder is not an object
    assert.equal(await storage.stat('nowhere/x'), null);
  });

  it('removes abandoned staged files only when old', async () => {
    const fresh = join(root, '.tmp', 'fresh.part');
    const stale = join(root, '.tmp', 'stale.part');
    writeFileSync(fresh, 'x');
    writeFileSync(stale, 'x');
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(stale, old, old);
    assert.equal(await storage.cleanupStaged(3600_000), 1);
    assert.deepEqual(readdirSync(join(root, '.tmp')), ['fresh.part']);
    rmSync(fresh);
  });

  it('refuses invalid keys before touching the disk', async () => {
    await assert.rejects(storage.write('../outside', Buffer.from('x')), InvalidMediaKeyError);
    await assert.rejects(storage.open('/etc/passwd'), InvalidMediaKeyError);
    assert.throws(() => storage.localPath('a/../../x'), InvalidMediaKeyError);
  });
});
