import type { ServerResponse } from 'node:http';

/**
 * Writes an SSE stream on the raw response with backpressure: when the socket buffer is full
 * (`write()` returns false) the producer waits for `drained()`, so a slow client slows the
 * upstream read instead of growing memory. A closed connection resolves every wait at once.
 *
 * Few system calls per stream: the head is not flushed on its own but leaves with the first
 * event (or at the next turn of the event loop if no event is written before then, so a slow
 * upstream does not hold the client's headers back), and `end(text)` sends the last events and
 * the end of the body in one write. The events written in one turn (the chunks of one upstream
 * read) are joined and handed to the response once, at the end of the turn, as one HTTP chunk
 * (at once past 16 KiB, so backpressure still applies to a large burst). A write that does not
 * have to wait costs no promise.
 */
export class SseWriter {
  /** Whether anything (head included) went to the socket: until then the head waits for the first event. */
  private sent = false;
  /** Events written this turn, not yet handed to the response. */
  private pending = '';

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
    if (this.pending === '') process.nextTick(flushPending, this);
    this.pending += text;
    if (this.pending.length >= FLUSH_AT) this.flush();
    return !this.raw.writableNeedDrain;
  }

  /** Hands what was written this turn to the response. */
  flush(): void {
    const text = this.pending;
    if (text === '') return;
    this.pending = '';
    if (this.open) this.raw.write(text);
  }

  /** Resolves once the socket buffer drained or the connection closed. */
  drained(): Promise<void> {
    this.flush();
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
    const last = this.pending + text;
    this.pending = '';
    if (!this.open) return;
    this.sent = true;
    if (last === '') this.raw.end();
    else this.raw.end(last);
  }
}

/** Past this many characters a turn's events go out at once instead of at the end of the turn. */
const FLUSH_AT = 16 * 1024;

const flushPending = (writer: SseWriter): void => writer.flush();

/** `data: <json>` (Chat-style chunks). */
export const dataLine = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

/** `event: <type>` + `data: <json>` (Responses-style events, and error events). */
export const eventLine = (type: string, payload: unknown): string => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
