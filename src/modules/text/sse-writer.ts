import type { ServerResponse } from 'node:http';

/**
 * Writes an SSE stream on the raw response with backpressure: when the socket buffer is full
 * (`write()` returns false) the producer waits for `drained()`, so a slow client slows the
 * upstream read instead of growing memory. A closed connection resolves every wait at once.
 *
 * Few system calls per stream: the head is not flushed on its own but leaves with the first
 * event (or at the next turn of the event loop if no event is written before then, so a slow
 * upstream does not hold the client's headers back), and `end(text)` sends the last events and
 * the end of the body in one write. A write that does not have to wait costs no promise.
 */
export class SseWriter {
  /** Whether anything (head included) went to the socket: until then the head waits for the first event. */
  private sent = false;

  constructor(private readonly raw: ServerResponse) {}

  get open(): boolean {
    return !this.raw.destroyed && !this.raw.writableEnded;
  }

  start(headers: Record<string, string>): void {
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    setImmediate(() => {
      if (!this.sent && this.open) {
        this.sent = true;
        this.raw.flushHeaders();
      }
    });
  }

  /** Queues `text`; false when the caller should wait for `drained()` before writing more. */
  write(text: string): boolean {
    if (!this.open || text === '') return true;
    this.sent = true;
    return this.raw.write(text);
  }

  /** Resolves once the socket buffer drained or the connection closed. */
  drained(): Promise<void> {
    if (!this.open || !this.raw.writableNeedDrain) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.on('drain', done);
      this.raw.on('close', done);
    });
  }

  /** Ends the stream, with `text` as its last bytes (in the same write). */
  end(text = ''): void {
    if (!this.open) return;
    this.sent = true;
    if (text === '') this.raw.end();
    else this.raw.end(text);
  }
}

/** `data: <json>` (Chat-style chunks). */
export const dataLine = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

/** `event: <type>` + `data: <json>` (Responses-style events, and error events). */
export const eventLine = (type: string, payload: unknown): string => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
