import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { InvalidMediaKeyError } from './media-key.js';
import { MediaChangedWhileReadingError, type MediaStorage } from './media-storage.js';

/** What the contract needs from a driver under test, beyond the driver itself. */
export interface MediaStorageHarness {
  storage: MediaStorage;
  /** How many staged writes the driver holds (abandoned or in flight), read from the store itself. */
  stagedCount(): Promise<number>;
  /** A reader opened before a replacement still streams the old bytes (files; versioned buckets); else it fails. */
  keepsReplacedVersionWhileOpen: boolean;
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The MediaStorage contract, registered as `it` cases inside the caller's `describe`: every
 * driver (local disk, S3, a team's own) must pass all of them. `harness()` is read when a case
 * runs, so the caller may build the driver in a `before` hook.
 */
export function mediaStorageContract(harness: () => MediaStorageHarness): void {
  it('writes buffers, streams and files under the key and reads them back, whole or by range', async () => {
    const { storage } = harness();
    assert.deepEqual(await storage.write('a/buffer.bin', Buffer.from('from a buffer')), { bytes: 13 });
    assert.deepEqual(await storage.write('a/stream.bin', Readable.from([Buffer.from('from '), Buffer.from('a stream')])), { bytes: 13 });
    const source = join(tmpdir(), `svc-media-contract-source-${randomBytes(6).toString('hex')}`);
    writeFileSync(source, 'from a file');
    try {
      assert.deepEqual(await storage.write('a/file.bin', { path: source }), { bytes: 11 });
    } finally {
      rmSync(source, { force: true });
    }
    assert.equal(await text((await storage.open('a/stream.bin'))!.stream()), 'from a stream');
    const handle = await storage.open('a/file.bin');
    assert.equal(handle?.bytes, 11);
    assert.equal(await text(handle!.stream({ start: 5, end: 10 })), 'a file');
    const stat = await storage.stat('a/file.bin');
    assert.deepEqual(stat, { bytes: 11, version: handle!.version });
  });

  it('streams a large body in parts and serves ranges across part boundaries', async () => {
    const { storage } = harness();
    const body = randomBytes(11 * 1024 * 1024 + 123); // three 5 MiB parts on S3
    const chunks = Array.from({ length: Math.ceil(body.length / 65_536) }, (_, i) => body.subarray(i * 65_536, (i + 1) * 65_536));
    assert.deepEqual(await storage.write('big/body.bin', Readable.from(chunks)), { bytes: body.length });
    const whole = await storage.open('big/body.bin');
    assert.equal(whole?.bytes, body.length);
    assert.equal(sha256(await buffer(whole!.stream())), sha256(body));
    const span = { start: 5 * 1024 * 1024 - 10, end: 5 * 1024 * 1024 + 9 };
    const part = await storage.open('big/body.bin');
    assert.deepEqual(await buffer(part!.stream(span)), body.subarray(span.start, span.end + 1));
    assert.equal(await storage.delete('big/body.bin'), true);
  });

  it('publishes nothing until commit, and nothing at all when discarded', async () => {
    const { storage, stagedCount } = harness();
    const staged = await storage.stage('b/staged.bin', Buffer.from('staged'));
    assert.equal(staged.bytes, 6);
    assert.equal(await storage.stat('b/staged.bin'), null);
    assert.equal(await storage.open('b/staged.bin'), null);
    await staged.commit();
    assert.equal((await storage.stat('b/staged.bin'))?.bytes, 6);
    const dropped = await storage.stage('b/dropped.bin', Buffer.from('dropped'));
    await dropped.discard();
    await dropped.discard(); // twice is safe
    await staged.discard(); // after commit too: the published object stays
    assert.equal(await storage.stat('b/dropped.bin'), null);
    assert.equal(await text((await storage.open('b/staged.bin'))!.stream()), 'staged');
    assert.equal(await stagedCount(), 0);
  });

  it('replaces an object atomically; an open reader never streams bytes other than those it announced', async () => {
    const { storage, stagedCount, keepsReplacedVersionWhileOpen } = harness();
    await storage.write('c/x.bin', Buffer.from('version one'));
    const reader = await storage.open('c/x.bin');
    const before = await storage.stat('c/x.bin');
    assert.equal(reader?.bytes, 11);
    await storage.write('c/x.bin', Buffer.from('two'));
    if (keepsReplacedVersionWhileOpen) assert.equal(await text(reader!.stream()), 'version one');
    else await assert.rejects(text(reader!.stream()), MediaChangedWhileReadingError);
    const afterStat = await storage.stat('c/x.bin');
    assert.equal(afterStat?.bytes, 3);
    assert.notEqual(afterStat?.version, before?.version);
    const fresh = await storage.open('c/x.bin');
    assert.equal(fresh?.version, afterStat?.version);
    assert.equal(await text(fresh!.stream()), 'two');
    assert.equal(await stagedCount(), 0);
  });

  it('leaves no trace of a stream that fails midway', async () => {
    const { storage, stagedCount } = harness();
    const failing = Readable.from(
      (async function* () {
        yield Buffer.alloc(1000);
        throw new Error('boom');
      })(),
    );
    await assert.rejects(storage.stage('d/failed.bin', failing), /boom/);
    assert.equal(await storage.stat('d/failed.bin'), null);
    assert.equal(await stagedCount(), 0);
  });

  it('deletes idempotently and answers null for missing objects', async () => {
    const { storage } = harness();
    await storage.write('e/gone.bin', Buffer.from('x'));
    assert.equal(await storage.delete('e/gone.bin'), true);
    assert.equal(await storage.delete('e/gone.bin'), false);
    assert.equal(await storage.open('e/gone.bin'), null);
    await storage.write('f/inside.bin', Buffer.from('x'));
    assert.equal(await storage.open('f'), null); // a folder (a key prefix) is not an object
    assert.equal(await storage.stat('nowhere/x'), null);
  });

  it('removes abandoned staged writes only when old (the store clock has whole-second precision at worst)', async () => {
    const { storage, stagedCount } = harness();
    const stale = await storage.stage('g/stale.bin', Buffer.from('abandoned'));
    await sleep(3000);
    const fresh = await storage.stage('g/fresh.bin', Buffer.from('in flight'));
    assert.equal(await storage.cleanupStaged(2000), 1);
    assert.equal(await stagedCount(), 1);
    await fresh.commit();
    await fresh.discard();
    await stale.discard(); // already gone: still safe
    assert.equal(await stagedCount(), 0);
    assert.equal(await storage.stat('g/stale.bin'), null);
    assert.equal((await storage.stat('g/fresh.bin'))?.bytes, 9);
  });

  it('refuses invalid keys before touching the store', async () => {
    const { storage } = harness();
    await assert.rejects(storage.write('../outside', Buffer.from('x')), InvalidMediaKeyError);
    await assert.rejects(storage.open('/etc/passwd'), InvalidMediaKeyError);
    await assert.rejects(storage.stat('a/../../x'), InvalidMediaKeyError);
    await assert.rejects(storage.delete('.staging/x'), InvalidMediaKeyError);
  });
}
