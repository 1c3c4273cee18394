import type { Readable } from 'node:stream';

/**
 * Reads a response body up to `cap` bytes. Past the cap it stops reading, destroys the body
 * (so a huge or endless answer costs at most `cap` bytes of memory) and says so.
 * Transport errors while reading are thrown as they are.
 */
export async function readBounded(body: Readable, cap: number): Promise<{ bytes: Buffer; overflow: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    total += buffer.length;
    if (total > cap) {
      body.destroy();
      return { bytes: Buffer.concat(chunks), overflow: true };
    }
    chunks.push(buffer);
  }
  return { bytes: Buffer.concat(chunks, total), overflow: false };
}

/** A response's `content-length` when it already says the body is too big. */
export function declaresMoreThan(headers: Record<string, string | string[] | undefined>, cap: number): boolean {
  const value = Number(headers['content-length']);
  return Number.isFinite(value) && value > cap;
}
