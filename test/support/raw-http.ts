import { connect } from 'node:net';

export interface RawAnswer {
  /** 0 when the server sent nothing. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote, as received. */
  raw: string;
  /** Whether the server closed the connection before `waitMs` ran out. */
  closedByServer: boolean;
  elapsedMs: number;
}

/**
 * Writes `text` as it is on a plain TCP connection (fetch and undici normalise or refuse what
 * these tests must send: malformed escapes, oversized URLs, stalled bodies) and collects what
 * the server answers until it closes the connection or `waitMs` passes. An answer that keeps
 * the connection open is complete as soon as its content-length of body has arrived.
 */
export function rawHttp(baseUrl: string, text: string, waitMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname);
    let settled = false;
    const finish = (closedByServer: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(chunks).toString('latin1')), closedByServer, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const answer = parse(Buffer.concat(chunks).toString('latin1'));
      const length = Number(answer.headers['content-length']);
      const keptOpen = answer.headers.connection?.toLowerCase() !== 'close';
      if (keptOpen && answer.status > 0 && Number.isInteger(length) && Buffer.byteLength(answer.body, 'latin1') >= length) finish(false);
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.write(text);
  });
}

function parse(raw: string): Pick<RawAnswer, 'status' | 'headers' | 'body' | 'raw'> {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: '', raw };
  const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: raw.slice(end + 4), raw };
}
