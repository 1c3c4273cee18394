// Media storage benchmark (issue 10, item 3): the same work on each driver, figures printed.
//   store: a 64 MiB stream written through stage() + commit(), MB/s and the growth of the
//          process's peak RSS (a driver that buffered the body whole would grow by ~64 MiB);
//   read:  the whole object streamed back, MB/s; then 200 ranged reads of 64 KiB (a player seeking).
// S3 runs against s3rver in process (a development server on this machine, not a figure for AWS).
// Run: npm run build && node dist/bench/media/run.js   Knob: BENCH_MEDIA_MIB (default 64).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalDiskMediaStorage } from '../../src/modules/media/local-disk-media-storage.js';
import type { MediaStorage } from '../../src/modules/media/media-storage.js';
import { S3MediaStorage } from '../../src/modules/media/s3-media-storage.js';
import { startS3Server } from '../../test/support/s3-server.js';

const MIB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_MEDIA_MIB ?? 64) * MIB;
const CHUNK = randomBytes(MIB);

/** SIZE bytes, one MiB chunk at a time, never all in memory. */
function body(): Readable {
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < SIZE; sent += MIB) yield CHUNK;
    })(),
  );
}

async function drain(stream: Readable): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += (chunk as Buffer).length;
  return bytes;
}

async function measure(name: string, storage: MediaStorage): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  let t0 = performance.now();
  await storage.write('bench/clip.mp4', body());
  const storeSeconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);

  t0 = performance.now();
  const read = await drain((await storage.open('bench/clip.mp4'))!.stream());
  const readSeconds = (performance.now() - t0) / 1000;
  if (read !== SIZE) throw new Error(`${name}: read ${read} of ${SIZE} bytes`);

  t0 = performance.now();
  for (let i = 0; i < 200; i++) {
    const start = Math.floor(Math.random() * (SIZE - 65_536));
    await drain((await storage.open('bench/clip.mp4'))!.stream({ start, end: start + 65_535 }));
  }
  const rangeMs = (performance.now() - t0) / 200;
  await storage.delete('bench/clip.mp4');
  const mb = SIZE / MIB;
  console.log(
    `${name.padEnd(6)} store ${(mb / storeSeconds).toFixed(0).padStart(5)} MiB/s (peak RSS +${((peak - rssBefore) / MIB).toFixed(0)} MiB)` +
      `  read ${(mb / readSeconds).toFixed(0).padStart(5)} MiB/s  64 KiB range (open+GET) ${rangeMs.toFixed(2)} ms`,
  );
}

async function main(): Promise<void> {
  console.log(`${SIZE / MIB} MiB object, node ${process.version}`);
  const root = mkdtempSync(join(tmpdir(), 'svc-media-bench-'));
  const s3 = await startS3Server();
  const s3Storage = new S3MediaStorage(s3.storageOptions());
  try {
    await measure('local', new LocalDiskMediaStorage(root));
    await measure('s3', s3Storage);
  } finally {
    s3Storage.onModuleDestroy();
    await s3.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
