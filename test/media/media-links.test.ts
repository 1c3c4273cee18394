import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { MediaLinkSigner } from '../../src/modules/media/media-link-signer.js';
import { InvalidMediaKeyError } from '../../src/modules/media/media-key.js';
import { MediaNotFoundError } from '../../src/modules/media/media-errors.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/** 100 bytes whose values are their offsets, so any wrong slice shows. */
const HUNDRED = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
const HOUR_MS = 3600_000;

/** Status of a GET whose path goes on the wire exactly as given. */
function rawStatus(baseUrl: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(new URL(baseUrl), { path }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
  });
}

async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error: { code: string } };
  return body.error.code;
}

describe('media links (signed and public), ranges and retention', () => {
  let t: TestApp;
  let media: MediaService;
  let account: TestAccount;
  const clock = new ManualClock(new Date('2031-03-01T12:00:00.000Z'));

  before(async () => {
    t = await bootTestApp({ label: 'media', clock });
    media = t.app.get(MediaService);
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  const newKey = (ext = 'mp4') => `video/${account.workspaceId}/omni:${randomUUID()}.${ext}`;
  /** The link as a path on the test app (PUBLIC_BASE_URL is the app's own address). */
  const pathOf = (url: string) => url.slice(t.config.publicBaseUrl.length);
  const fileOf = (key: string) => join(t.mediaDir, ...key.split('/'));

  async function storeHundred(options: { expiresAt?: Date | null; publicLink?: boolean } = {}): Promise<{ key: string; path: string }> {
    const key = newKey();
    await media.store({ key, body: HUNDRED, contentType: 'video/mp4', workspaceId: account.workspaceId, ...options });
    return { key, path: pathOf((await media.signedLink(key)).url) };
  }

  describe('signed links', () => {
    it('serve the stored bytes with the stored Content-Type, without an API key', async () => {
      const body = randomBytes(300_000); // several stream chunks
      const key = newKey();
      const chunks = [body.subarray(0, 65_536), body.subarray(65_536, 200_000), body.subarray(200_000)];
      const stored = await media.store({ key, body: Readable.from(chunks), contentType: 'video/mp4', workspaceId: account.workspaceId });
      assert.deepEqual(stored, { key, contentType: 'video/mp4', bytes: body.length });

      const link = await media.signedLink(key);
      assert.ok(link.url.startsWith(`${t.config.publicBaseUrl}/media/${key}?exp=`));
      assert.equal(link.expiresAt.getTime(), clock.now().getTime() + HOUR_MS);
      const response = await fetch(link.url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'video/mp4');
      assert.equal(response.headers.get('content-length'), String(body.length));
      assert.equal(response.headers.get('accept-ranges'), 'bytes');
      assert.equal(response.headers.get('cache-control'), 'private, max-age=3600');
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(body));
      const rows = await t.db.query<{ bytes: string; content_type: string; workspace_id: string; public_token: string | null }>(
        'SELECT bytes, content_type, workspace_id, public_token FROM media_object WHERE key = $1',
        [key],
      );
      assert.deepEqual(rows, [{ bytes: String(body.length), content_type: 'video/mp4', workspace_id: account.workspaceId, public_token: null }]);
    });

    it('answer HEAD with the same headers and no body', async () => {
      const { path } = await storeHundred();
      const response = await t.request(path, { method: 'HEAD' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'video/mp4');
      assert.equal(response.headers.get('content-length'), '100');
      assert.equal(response.headers.get('accept-ranges'), 'bytes');
      assert.equal((await response.arrayBuffer()).byteLength, 0);
    });

    it('are refused with 403 media.invalid_signature when the signature is tampered with or missing', async () => {
      const { path } = await storeHundred();
      const url = new URL(path, t.baseUrl);
      const sig = url.searchParams.get('sig')!;
      const tampered = new URL(url);
      tampered.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
      const missing = new URL(url);
      missing.searchParams.delete('sig');
      for (const candidate of [tampered, missing]) {
        const response = await fetch(candidate);
        assert.equal(response.status, 403, candidate.toString());
        assert.equal(await errorCode(response), 'media.invalid_signature');
      }
      const head = await fetch(tampered, { method: 'HEAD' });
      assert.equal(head.status, 403);
    });

    it('are refused with 403 when the key or exp is changed', async () => {
      const first = await storeHundred();
      const second = await storeHundred();
      const url = new URL(first.path, t.baseUrl);
      const laterExp = new URL(url);
      laterExp.searchParams.set('exp', String(Number(url.searchParams.get('exp')) + 3600));
      const noExp = new URL(url);
      noExp.searchParams.delete('exp');
      const otherKey = new URL(url);
      otherKey.pathname = `/media/${second.key}`;
      for (const candidate of [laterExp, noExp, otherKey]) {
        const response = await fetch(candidate);
        assert.equal(response.status, 403, candidate.toString());
        assert.equal(await errorCode(response), 'media.invalid_signature');
      }
      // fetch would resolve dot segments itself: send the raw paths.
      for (const raw of [`/media/video/../${first.key}${url.search}`, `/media/video/%2e%2e/${first.key}${url.search}`]) {
        assert.equal(await rawStatus(t.baseUrl, raw), 403, raw);
      }
    });

    it('are refused with 403 media.link_expired once exp has passed', async () => {
      const { key } = await storeHundred();
      const link = await media.signedLink(key, 60);
      assert.equal(link.expiresAt.getTime(), clock.now().getTime() + 60_000);
      assert.equal((await fetch(link.url)).status, 200);
      clock.advance(60_000);
      const response = await fetch(link.url);
      assert.equal(response.status, 403);
      assert.equal(await errorCode(response), 'media.link_expired');
      // A fresh link works again.
      assert.equal((await fetch((await media.signedLink(key)).url)).status, 200);
    });

    it('never outlive the object and cap the ttl at one hour', async () => {
      const soon = await storeHundred({ expiresAt: new Date(clock.now().getTime() + 90_000) });
      const capped = await media.signedLink(soon.key, 3600);
      assert.equal(capped.expiresAt.getTime(), clock.now().getTime() + 90_000);
      const { key } = await storeHundred();
      assert.equal((await media.signedLink(key, 86_400)).expiresAt.getTime(), clock.now().getTime() + HOUR_MS);
      const response = await fetch(capped.url);
      assert.equal(response.headers.get('cache-control'), 'private, max-age=90');
    });

    it('answer 404 media.not_found for a deleted object, and delete is idempotent', async () => {
      const { key, path } = await storeHundred();
      assert.equal(await media.exists(key), true);
      await media.delete(key);
      await media.delete(key);
      assert.equal(await media.exists(key), false);
      assert.equal(existsSync(fileOf(key)), false);
      const response = await t.request(path);
      assert.equal(response.status, 404);
      assert.equal(await errorCode(response), 'media.not_found');
      await assert.rejects(media.signedLink(key), MediaNotFoundError);
      const [row] = await t.db.query<{ deleted_at: Date | null }>('SELECT deleted_at FROM media_object WHERE key = $1', [key]);
      assert.ok(row?.deleted_at);
    });
  });

  describe('ranges', () => {
    let path: string;
    before(async () => {
      ({ path } = await storeHundred());
    });
    const get = (range: string, method = 'GET') => t.request(path, { method, headers: { range } });

    it('bytes=10-19 answers 206 with exactly those 10 bytes', async () => {
      const response = await get('bytes=10-19');
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), 'bytes 10-19/100');
      assert.equal(response.headers.get('content-length'), '10');
      assert.equal(response.headers.get('content-type'), 'video/mp4');
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), HUNDRED.subarray(10, 20));
    });

    it('suffix ranges give the last N bytes (all of it when N exceeds the size)', async () => {
      const last = await get('bytes=-7');
      assert.equal(last.status, 206);
      assert.equal(last.headers.get('content-range'), 'bytes 93-99/100');
      assert.deepEqual(Buffer.from(await last.arrayBuffer()), HUNDRED.subarray(93));
      const longer = await get('bytes=-500');
      assert.equal(longer.status, 206);
      assert.equal(longer.headers.get('content-range'), 'bytes 0-99/100');
      assert.deepEqual(Buffer.from(await longer.arrayBuffer()), HUNDRED);
    });

    it('open ranges run to the end; an end past the size is clamped', async () => {
      const open = await get('bytes=95-');
      assert.equal(open.status, 206);
      assert.equal(open.headers.get('content-range'), 'bytes 95-99/100');
      assert.deepEqual(Buffer.from(await open.arrayBuffer()), HUNDRED.subarray(95));
      const clamped = await get('bytes=98-1000');
      assert.equal(clamped.headers.get('content-range'), 'bytes 98-99/100');
      assert.deepEqual(Buffer.from(await clamped.arrayBuffer()), HUNDRED.subarray(98));
    });

    it('an unsatisfiable range answers 416 with Content-Range: bytes */size', async () => {
      for (const range of ['bytes=100-', 'bytes=150-160', 'bytes=-0']) {
        const response = await get(range);
        assert.equal(response.status, 416, range);
        assert.equal(response.headers.get('content-range'), 'bytes */100');
        assert.equal(await errorCode(response), 'media.range_not_satisfiable');
      }
    });

    it('HEAD with a range announces the partial answer', async () => {
      const response = await get('bytes=0-0', 'HEAD');
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), 'bytes 0-0/100');
      assert.equal(response.headers.get('content-length'), '1');
    });

    it('ignores malformed and multiple ranges (whole body) and honours If-Range and If-None-Match', async () => {
      for (const range of ['bytes=abc', 'bytes=20-10', 'bytes=0-1,5-6', 'items=0-1']) {
        const response = await get(range);
        assert.equal(response.status, 200, range);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), HUNDRED);
      }
      const etag = (await t.request(path, { method: 'HEAD' })).headers.get('etag')!;
      assert.match(etag, /^"[^"]+"$/);
      const fresh = await t.request(path, { headers: { range: 'bytes=0-9', 'if-range': etag } });
      assert.equal(fresh.status, 206);
      await fresh.arrayBuffer();
      const stale = await t.request(path, { headers: { range: 'bytes=0-9', 'if-range': '"older"' } });
      assert.equal(stale.status, 200);
      assert.equal((await stale.arrayBuffer()).byteLength, 100);
      const unchanged = await t.request(path, { headers: { 'if-none-match': etag } });
      assert.equal(unchanged.status, 304);
    });

    it('serves exact ranges of a large file', async () => {
      const body = randomBytes(1_000_000);
      const key = newKey();
      await media.store({ key, body, contentType: 'video/mp4' });
      const link = pathOf((await media.signedLink(key)).url);
      const response = await t.request(link, { headers: { range: 'bytes=123456-654320' } });
      assert.equal(response.status, 206);
      assert.equal(response.headers.get('content-range'), `bytes 123456-654320/${body.length}`);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(body.subarray(123456, 654321)));
    });
  });

  describe('public links', () => {
    it('serve the object until it expires, then answer 404 (before and after the sweep)', async () => {
      // Decision: an expired public link answers 404 media.not_found, not 403. The token names the
      // object rather than carrying an expiry, and the answer must not change once the sweeper runs.
      const expiresAt = new Date(clock.now().getTime() + 24 * HOUR_MS);
      const key = newKey('png');
      const png = randomBytes(2048);
      await media.store({ key, body: png, contentType: 'image/png', workspaceId: account.workspaceId, expiresAt, publicLink: true });
      const link = await media.publicLink(key);
      assert.match(link.url, new RegExp(`^${t.config.publicBaseUrl}/media/public/[A-Za-z0-9_-]{43}$`));
      assert.equal(link.expiresAt.getTime(), expiresAt.getTime());

      const response = await fetch(link.url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/png');
      assert.equal(response.headers.get('cache-control'), `public, max-age=${24 * 3600}`);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(png));
      const ranged = await fetch(link.url, { headers: { range: 'bytes=-16' } });
      assert.equal(ranged.status, 206);
      assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(png.subarray(-16)));

      // A retried store keeps the same public link.
      await media.store({ key, body: png, contentType: 'image/png', expiresAt, publicLink: true });
      assert.equal((await media.publicLink(key)).url, link.url);

      clock.set(expiresAt);
      const expired = await fetch(link.url);
      assert.equal(expired.status, 404);
      assert.equal(await errorCode(expired), 'media.not_found');
      await media.sweepExpired();
      assert.equal((await fetch(link.url)).status, 404);
      assert.equal((await fetch(link.url, { method: 'HEAD' })).status, 404);
    });

    it('answer 404 for an unknown or malformed token', async () => {
      for (const token of [randomBytes(32).toString('base64url'), 'short', 'x'.repeat(43)]) {
        const response = await t.request(`/media/public/${token}`);
        assert.equal(response.status, 404);
        assert.equal(await errorCode(response), 'media.not_found');
      }
    });
  });

  describe('retention sweeper', () => {
    it('deletes expired files and marks their rows; unexpired objects are untouched', async () => {
      const now = clock.now().getTime();
      const expiring = newKey('png');
      await media.store({ key: expiring, body: HUNDRED, contentType: 'image/png', expiresAt: new Date(now + 60_000), publicLink: true });
      const publicUrl = (await media.publicLink(expiring)).url;
      const later = await storeHundred({ expiresAt: new Date(now + 24 * HOUR_MS) });
      const forever = await storeHundred({ expiresAt: null });
      assert.equal(existsSync(fileOf(expiring)), true);

      clock.advance(120_000);
      const [{ due }] = await t.db.query<{ due: string }>(
        'SELECT count(*) AS due FROM media_object WHERE deleted_at IS NULL AND expires_at <= $1',
        [clock.now()],
      ) as [{ due: string }];
      const removed = await media.sweepExpired();
      assert.ok(removed >= 1);
      assert.equal(removed, Number(due));

      assert.equal(existsSync(fileOf(expiring)), false);
      const [row] = await t.db.query<{ deleted_at: Date | null }>('SELECT deleted_at FROM media_object WHERE key = $1', [expiring]);
      assert.equal(row?.deleted_at?.getTime(), clock.now().getTime());
      assert.equal(await media.exists(expiring), false);
      // Its public link, and a signed link that is itself still valid, answer 404.
      assert.equal((await fetch(publicUrl)).status, 404);
      const signer = t.app.get(MediaLinkSigner);
      const exp = Math.floor(clock.now().getTime() / 1000) + 600;
      const forged = await t.request(`/media/${expiring}?exp=${exp}&sig=${signer.sign(expiring, exp)}`);
      assert.equal(forged.status, 404);
      assert.equal(await errorCode(forged), 'media.not_found');

      for (const kept of [later, forever]) {
        assert.equal(existsSync(fileOf(kept.key)), true);
        assert.equal(await media.exists(kept.key), true);
        const response = await t.request(pathOf((await media.signedLink(kept.key)).url));
        assert.equal(response.status, 200);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), HUNDRED);
      }
      assert.equal(await media.sweepExpired(), 0);
    });

    it('is registered as the media-retention periodic task', async () => {
      const { PeriodicTasks } = await import('../../src/queue/periodic-tasks.js');
      const task = t.app.get(PeriodicTasks).get('media-retention');
      assert.equal(task?.intervalMs, t.config.env.MEDIA_SWEEP_INTERVAL_MS);
    });
  });

  it('documents both media routes in OpenAPI', async () => {
    const doc = (await (await t.request('/docs/json')).json()) as { paths: Record<string, Record<string, unknown>> };
    assert.deepEqual(Object.keys(doc.paths['/media/{path}'] ?? {}).sort(), ['get', 'head']);
    assert.deepEqual(Object.keys(doc.paths['/media/public/{token}'] ?? {}).sort(), ['get', 'head']);
  });

  describe('storing', () => {
    it('the same key twice leaves one file with the second content', async () => {
      const key = newKey();
      await media.store({ key, body: Buffer.from('first content, longer than the second'), contentType: 'video/mp4' });
      const source = join(t.mediaDir, '..', `svc-media-source-${randomUUID()}`);
      writeFileSync(source, 'second');
      await media.store({ key, body: { path: source }, contentType: 'video/webm' });

      const folder = join(t.mediaDir, 'video', account.workspaceId);
      assert.deepEqual(readdirSync(folder).filter((name) => key.endsWith(name)), [key.split('/').pop()]);
      assert.equal(readFileSync(fileOf(key), 'utf8'), 'second');
      assert.deepEqual(readdirSync(join(t.mediaDir, '.tmp')), []);
      const rows = await t.db.query<{ bytes: string; content_type: string }>('SELECT bytes, content_type FROM media_object WHERE key = $1', [key]);
      assert.deepEqual(rows, [{ bytes: '6', content_type: 'video/webm' }]);
      const response = await t.request(pathOf((await media.signedLink(key)).url));
      assert.equal(response.headers.get('content-type'), 'video/webm');
      assert.equal(await response.text(), 'second');
    });

    it('a failing stream leaves the previous object intact and no partial file', async () => {
      const key = newKey();
      await media.store({ key, body: HUNDRED, contentType: 'video/mp4' });
      const failing = Readable.from((async function* () {
        yield Buffer.alloc(10_000, 1);
        throw new Error('upstream connection reset');
      })());
      await assert.rejects(media.store({ key, body: failing, contentType: 'video/mp4' }), /upstream connection reset/);
      assert.deepEqual(readFileSync(fileOf(key)), HUNDRED);
      assert.deepEqual(readdirSync(join(t.mediaDir, '.tmp')), []);
      const [row] = await t.db.query<{ bytes: string }>('SELECT bytes FROM media_object WHERE key = $1', [key]);
      assert.equal(row?.bytes, '100');
    });

    it('rejects invalid keys and content types as programming errors', async () => {
      for (const key of ['../escape.mp4', '/abs.mp4', 'a//b.mp4', 'a/../b.mp4', 'a/.hidden', 'public/x.png', 'sp ace.mp4', 'a/', '']) {
        await assert.rejects(media.store({ key, body: HUNDRED, contentType: 'video/mp4' }), InvalidMediaKeyError, key);
      }
      await assert.rejects(media.store({ key: newKey(), body: HUNDRED, contentType: 'video/mp4\r\nx-evil: 1' }), /content type/);
      await assert.rejects(media.store({ key: newKey(), body: HUNDRED, contentType: 'image/png', publicLink: true }), /expiresAt/);
    });
  });

  describe('temporary local copies (withLocalFile)', () => {
    it('hand a tool a file with the stored bytes, and remove it once the tool is done (even when it fails)', async () => {
      const { key } = await storeHundred();
      let copy = '';
      const size = await media.withLocalFile(key, async (path) => {
        copy = path;
        assert.notEqual(path, fileOf(key)); // a copy, never the stored file itself
        assert.deepEqual(readFileSync(path), HUNDRED);
        return HUNDRED.length;
      });
      assert.equal(size, 100);
      assert.equal(existsSync(copy), false);
      await assert.rejects(
        media.withLocalFile(key, async (path) => {
          copy = path;
          throw new Error('tool crashed');
        }),
        /tool crashed/,
      );
      assert.equal(existsSync(copy), false);
      await assert.rejects(media.withLocalFile(newKey(), () => Promise.resolve()), MediaNotFoundError);
    });
  });
});
