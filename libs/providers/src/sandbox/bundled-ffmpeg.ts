import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The ffmpeg binary shipped inside @ffmpeg-installer (null when the package or its binary is missing). */
export function bundledFfmpegPath(): string | null {
  try {
    const path = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    return existsSync(path) ? path : null;
  } catch {
    return null;
  }
}
