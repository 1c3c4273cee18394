import { existsSync } from 'node:fs';

/** How long a look at the ffmpeg binary is trusted. */
export const FFMPEG_CHECK_INTERVAL_MS = 1000;

/**
 * Whether the sandboxes' ffmpeg binary is there, looked at most once a second: every creation
 * asks its adapter `available()`, and a synchronous `stat` per creation was 1–3% of the gateway's
 * CPU under creation load (docs/benchmarks.md), on the event loop.
 */
export class FfmpegPresence {
  private found = false;
  private checkedUntil = 0;

  constructor(
    readonly path: string | null,
    private readonly now: () => number = Date.now,
  ) {}

  get available(): boolean {
    if (this.path === null) return false;
    const now = this.now();
    if (now >= this.checkedUntil) {
      this.found = existsSync(this.path);
      this.checkedUntil = now + FFMPEG_CHECK_INTERVAL_MS;
    }
    return this.found;
  }
}
