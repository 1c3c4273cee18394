import type { ServerResponse } from 'node:http';

/**
 * Writes an SSE stream on the raw response with backpressure: when the socket buffer is full
 * (`write()` returns false) the producer waits for 'drain', so a slow client slows the upstream
 * read instead of growing memory. A closed connection resolves every wait at once.
 */
export class SseWriter {
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
    this.raw.flushHeaders();
  }

  async write(text: string): Promise<void> {
    if (!this.open || text === '') return;
    if (this.raw.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.on('drain', done);
      this.raw.on('close', done);
    });
  }

  end(): void {
    if (this.open) this.raw.end();
  }
}

/** `data: <json>` (Chat-style chunks). */
export const dataLine = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

/** `event: <type>` + `data: <json>` (Responses-style events, and error events). */
export const eventLine = (type: string, payload: unknown): string => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
