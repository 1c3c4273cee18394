import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { renderTestClip } from '../../../libs/providers/index.js';

const run = promisify(execFile);

export async function ffmpegPath(): Promise<string> {
  return ((await import('@ffmpeg-installer/ffmpeg')) as unknown as { default: { path: string } }).default.path;
}

interface Fixture {
  body: Buffer;
  contentType: string;
  status?: number;
}

/**
 * A local HTTP server with real media (PNG, JPEG, WebP, MP4 clips of 3 and 12 seconds) and bad
 * media (too large, wrong type, lying Content-Type, 404), for the worker's media validation.
 */
export class MediaFixtureServer {
  private server!: Server;
  private dir!: string;
  private readonly fixtures = new Map<string, Fixture>();
  private readonly lazyFixtures = new Map<string, () => Promise<Fixture>>();
  baseUrl = '';
  /** Requests served, by path. */
  readonly hits = new Map<string, number>();

  async start(): Promise<void> {
    this.dir = mkdtempSync(join(tmpdir(), 'svc-video-fixtures-'));
    const ffmpeg = await ffmpegPath();
    const png = join(this.dir, 'f.png');
    const jpg = join(this.dir, 'f.jpg');
    await run(ffmpeg, ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=64x36', '-frames:v', '1', png]);
    await run(ffmpeg, ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=64x36', '-frames:v', '1', jpg]);
    const clip = join(this.dir, 'clip.mp4');
    const long = join(this.dir, 'long.mp4');
    await renderTestClip(ffmpeg, { durationSeconds: 3, resolution: '360p', ratio: '16:9' }, clip);
    await renderTestClip(ffmpeg, { durationSeconds: 12, resolution: '360p', ratio: '16:9' }, long);
    const pngBytes = readFileSync(png);
    const webp = await sharp(pngBytes).webp().toBuffer();
    // WebP magic bytes with no decodable picture behind them.
    const brokenWebp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(24)]);
    this.fixtures.set('/first.png', { body: pngBytes, contentType: 'image/png' });
    this.fixtures.set('/last.jpg', { body: readFileSync(jpg), contentType: 'image/jpeg' });
    this.fixtures.set('/ref.webp', { body: webp, contentType: 'image/webp' });
    this.fixtures.set('/broken.webp', { body: brokenWebp, contentType: 'image/webp' });
    // Noise compresses well in lossy WebP (~3 MiB) but not in PNG (~22 MiB): rule 5's converted-PNG
    // cap. Made on first request (it takes a few seconds).
    this.lazyFixtures.set('/huge-png.webp', async () => {
      const noise = randomBytes(3000 * 2600 * 3);
      const body = await sharp(noise, { raw: { width: 3000, height: 2600, channels: 3 } }).webp({ quality: 30 }).toBuffer();
      return { body, contentType: 'image/webp' };
    });
    this.fixtures.set('/untyped.png', { body: pngBytes, contentType: 'application/octet-stream' });
    this.fixtures.set('/clip.mp4', { body: readFileSync(clip), contentType: 'video/mp4' });
    this.fixtures.set('/long.mp4', { body: readFileSync(long), contentType: 'video/mp4' });
    this.fixtures.set('/huge.png', { body: Buffer.concat([pngBytes, Buffer.alloc(21 * 1024 * 1024)]), contentType: 'image/png' });
    this.fixtures.set('/huge.mp4', { body: Buffer.concat([readFileSync(clip), Buffer.alloc(65 * 1024 * 1024)]), contentType: 'video/mp4' });
    this.fixtures.set('/text.png', { body: Buffer.from('<html>not an image</html>'), contentType: 'image/png' });
    this.fixtures.set('/lying.png', { body: pngBytes, contentType: 'image/gif' });
    this.fixtures.set('/image-as-video.mp4', { body: pngBytes, contentType: 'video/mp4' });

    this.server = createServer(async (request, response) => {
      const path = (request.url ?? '/').split('?')[0]!;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const lazy = this.lazyFixtures.get(path);
      if (lazy && !this.fixtures.has(path)) this.fixtures.set(path, await lazy());
      const fixture = this.fixtures.get(path);
      if (!fixture) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      response.writeHead(fixture.status ?? 200, { 'content-type': fixture.contentType, 'content-length': fixture.body.length });
      response.end(fixture.body);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A URL of this server (http: accepted because tests run with OUTBOUND_ALLOW_HTTP). */
  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
