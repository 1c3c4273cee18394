import { randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { copyFile, type FileHandle, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { assertValidMediaKey } from './media-key.js';
import { type ByteSpan, isStreamBody, type MediaBody, type MediaReadHandle, type MediaStat, MediaStorage, type StagedMediaWrite } from './media-storage.js';

/** Staged writes live here, on the same filesystem as the objects so publishing is one rename. */
const STAGING_DIR = '.tmp';

const isMissing = (error: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((error as { code?: string }).code ?? '');

const versionOf = (s: { ino: number; size: number; mtimeMs: number }): string =>
  `${s.ino.toString(16)}-${s.size.toString(16)}-${Math.floor(s.mtimeMs).toString(16)}`;

/** fsync of a directory, so a rename (or a new entry) in it survives a crash. */
async function syncDir(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Media under a local folder (MEDIA_DIR), one file per key at `<root>/<key>`.
 * Writes go to `<root>/.tmp/<uuid>.part`, are fsynced, then renamed over the key and the folder
 * fsynced: a crash leaves either the old object or the new one, never half a file.
 */
export class LocalDiskMediaStorage extends MediaStorage {
  private readonly stagingDir: string;

  constructor(private readonly root: string) {
    super();
    this.stagingDir = join(root, STAGING_DIR);
  }

  /** `<root>/<key>`: the file of an object. */
  private pathOf(key: string): string {
    assertValidMediaKey(key);
    const path = join(this.root, ...key.split('/'));
    // Defence in depth: the key rules already make this impossible.
    if (!path.startsWith(this.root + sep)) throw new Error(`media key escapes the media folder: ${key}`);
    return path;
  }

  async stage(key: string, body: MediaBody): Promise<StagedMediaWrite> {
    const target = this.pathOf(key);
    await mkdir(this.stagingDir, { recursive: true });
    const temp = join(this.stagingDir, `${randomUUID()}.part`);
    let bytes: number;
    try {
      bytes = await this.writeDurably(temp, body);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    let committed = false;
    return {
      bytes,
      commit: async () => {
        const folder = dirname(target);
        await mkdir(folder, { recursive: true });
        await rename(temp, target);
        committed = true;
        await syncDir(folder);
      },
      discard: async () => {
        if (!committed) await rm(temp, { force: true });
      },
    };
  }

  /** Writes `body` to a new file at `path`, fsyncs it, and returns its size. */
  private async writeDurably(path: string, body: MediaBody): Promise<number> {
    if (Buffer.isBuffer(body)) {
      await writeFile(path, body, { flag: 'wx', mode: 0o644 });
    } else if (isStreamBody(body)) {
      // Streamed chunk by chunk: a large upstream download is never held in memory.
      await pipeline(body, createWriteStream(path, { flags: 'wx', mode: 0o644 }));
    } else {
      await copyFile((body as { path: string }).path, path, constants.COPYFILE_EXCL);
    }
    // fsync flushes the file's data whichever descriptor wrote it.
    const handle = await open(path, 'r+');
    try {
      await handle.sync();
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  }

  async open(key: string): Promise<MediaReadHandle | null> {
    const path = this.pathOf(key);
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (isMissing(error) || (error as { code?: string }).code === 'EISDIR') return null;
      throw error;
    }
    let info;
    try {
      info = await handle.stat();
    } catch (error) {
      await handle.close();
      throw error;
    }
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    let released = false;
    return {
      bytes: info.size,
      version: versionOf(info),
      stream: (span?: ByteSpan) => {
        if (released) throw new Error('media read handle already used');
        released = true;
        // The stream owns the descriptor from here and closes it on end, error or destroy.
        return handle.createReadStream({ start: span?.start, end: span?.end, autoClose: true });
      },
      close: async () => {
        if (released) return;
        released = true;
        await handle.close();
      },
    };
  }

  async stat(key: string): Promise<MediaStat | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { bytes: info.size, version: versionOf(info) } : null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    const existed = (await this.stat(key)) !== null;
    await rm(path, { force: true });
    return existed;
  }

  async cleanupStaged(olderThanMs: number): Promise<number> {
    // File modification times are wall-clock; compare them with the wall clock (see MediaStorage).
    const now = Date.now();
    let names: string[];
    try {
      names = await readdir(this.stagingDir);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      const path = join(this.stagingDir, name);
      try {
        const info = await stat(path);
        if (now - info.mtimeMs > olderThanMs) {
          await rm(path, { force: true });
          removed++;
        }
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return removed;
  }
}
