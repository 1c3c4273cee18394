import type { ServerResponse } from 'node:http';

/**
 * Sends one speech stream's chunks to the client on the raw response, decoupled from the upstream
 * read: `push` never waits, a pump writes the queued chunks in order and waits for 'drain' when
 * the socket is full. So a slow client gets the audio at its own pace without stalling the
 * upstream, and the queue costs no copy (the chunks are kept for storage anyway, under the
 * stream's byte bound). A client that closes the connection drops what is left, silently.
 */
export class SpeechResponseWriter {
  private readonly queue: Buffer[] = [];
  private next = 0;
  private ending: 'end' | 'abort' | null = null;
  /** Wakes the pump waiting for work; `interrupt` wakes it waiting for 'drain' (an abort, a close). */
  private wake: (() => void) | null = null;
  private interrupt: (() => void) | null = null;
  private pumping: Promise<void> = Promise.resolve();

  constructor(private readonly raw: ServerResponse) {}

  get open(): boolean {
    return !this.raw.destroyed && !this.raw.writableEnded;
  }

  /** 200 with the headers, flushed at once; no content-length, so the body is chunked. */
  start(headers: Record<string, string>): void {
    this.raw.writeHead(200, { 'cache-control': 'no-store', 'x-accel-buffering': 'no', ...headers });
    this.raw.flushHeaders();
    this.raw.on('close', () => this.signal(true));
    this.pumping = this.pump();
  }

  push(chunk: Buffer): void {
    if (!this.open || chunk.length === 0) return;
    this.queue.push(chunk);
    this.signal();
  }

  /** A clean end once every queued chunk is written; resolves when done (or the client left). */
  end(): Promise<void> {
    this.ending ??= 'end';
    this.signal();
    return this.pumping;
  }

  /** Cuts the body short (no final chunk): the client sees a truncated response, not a clean end. */
  abort(): Promise<void> {
    this.ending = 'abort';
    this.signal(true);
    return this.pumping;
  }

  private signal(interrupt = false): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
    if (interrupt) this.interrupt?.();
  }

  private async pump(): Promise<void> {
    for (;;) {
      if (!this.open) return;
      if (this.ending === 'abort') {
        this.raw.destroy();
        return;
      }
      if (this.next < this.queue.length) {
        const chunk = this.queue[this.next]!;
        // Written chunks are not ours to keep: the caller holds its own references for storage.
        this.queue[this.next++] = EMPTY;
        if (!this.raw.write(chunk)) await this.drained();
        continue;
      }
      if (this.ending === 'end') {
        this.raw.end();
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Resolves on 'drain', or at once on an abort or a close (neither may wait for a drain that never comes). */
  private drained(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.interrupt = null;
        resolve();
      };
      this.raw.on('drain', done);
      this.interrupt = done;
    });
  }
}

const EMPTY = Buffer.alloc(0);
