import assert from 'node:assert/strict';

/**
 * Waits for a condition the workers bring about, reading every 50 ms; the cap only turns a hang
 * into a failure that shows the last value seen.
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${timeoutMs} ms; last seen ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
