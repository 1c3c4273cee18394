import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SpeechResponseWriter } from './audio-speech-writer.js';

/** A real HTTP server whose handler hands its response to the test. */
describe('SpeechResponseWriter (real sockets)', () => {
  let server: Server;
  let port = 0;
  const waiting: Array<(response: ServerResponse) => void> = [];

  before(async () => {
    server = createServer((_request, response) => waiting.shift()!(response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  /** Sends a request; resolves with the server's response object and the client's answer. */
  async function exchange(): Promise<{ raw: ServerResponse; answer: IncomingMessage }> {
    const raw = new Promise<ServerResponse>((resolve) => waiting.push(resolve));
    const request = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/' });
    request.end();
    const serverSide = await raw;
    const writer = new SpeechResponseWriter(serverSide);
    writer.start({ 'content-type': 'audio/mpeg', 'x-svc-task-id': 'audio:test' });
    const [answer] = (await once(request, 'response')) as [IncomingMessage];
    writers.set(serverSide, writer);
    return { raw: serverSide, answer };
  }
  const writers = new Map<ServerResponse, SpeechResponseWriter>();

  it('never waits in push, keeps the socket buffer bounded while the client does not read, and delivers everything in order', async () => {
    const { raw, answer } = await exchange();
    const writer = writers.get(raw)!;
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['transfer-encoding'], 'chunked');
    assert.equal(answer.headers['x-svc-task-id'], 'audio:test');
    answer.pause();
    const chunks = Array.from({ length: 400 }, (_, i) => Buffer.alloc(64 * 1024, i % 251));
    // 25 MiB pushed at once, the client reading nothing: push returns at once every time.
    for (const chunk of chunks) writer.push(chunk);
    // Let the pump run as far as it would go (a pump that ignored backpressure would have written everything by now).
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
    // The socket holds at most about one chunk beyond its high-water mark; the rest waits in the writer's queue.
    assert.ok(raw.writableLength <= raw.writableHighWaterMark + 64 * 1024 + 1024, `socket buffer ${raw.writableLength}`);
    const ended = writer.end();
    const received: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => received.push(chunk));
    answer.resume();
    await once(answer, 'end');
    await ended;
    assert.deepEqual(Buffer.concat(received), Buffer.concat(chunks));
  });

  it('abort cuts the body short: the client sees an aborted response, not a clean end', async () => {
    const { raw, answer } = await exchange();
    const writer = writers.get(raw)!;
    writer.push(Buffer.from('first'));
    const got = new Promise<string>((resolve) => {
      answer.on('aborted', () => resolve('aborted'));
      answer.on('error', () => resolve('error'));
      answer.on('end', () => resolve(answer.complete ? 'complete' : 'incomplete'));
    });
    answer.resume();
    await writer.abort();
    assert.notEqual(await got, 'complete');
  });

  it('a client that leaves makes push and end harmless', async () => {
    const { raw, answer } = await exchange();
    const writer = writers.get(raw)!;
    answer.destroy();
    await once(raw, 'close');
    writer.push(Buffer.from('nobody listens'));
    await writer.end();
    assert.equal(writer.open, false);
  });
});
