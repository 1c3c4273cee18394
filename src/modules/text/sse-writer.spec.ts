import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { dataLine, eventLine, SseWriter } from './sse-writer.js';

/** A real HTTP server and client: the writer is tested against Node's own sockets and backpressure. */
describe('SseWriter', () => {
  let server: Server;
  let nextResponse: (res: ServerResponse) => void;

  before(async () => {
    server = createServer((_req, res) => nextResponse(res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  after(() => server.close());

  /** Opens a request; resolves with the server's response object and the client's response. */
  async function open(): Promise<{ res: ServerResponse; client: IncomingMessage }> {
    const served = new Promise<ServerResponse>((resolve) => (nextResponse = resolve));
    const request = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const res = await served;
    const writer = new SseWriter(res);
    writer.start({ 'x-request-id': 'r1' });
    const [client] = (await once(request, 'response')) as [IncomingMessage];
    return { res, client };
  }

  it('starts an event stream with its headers at once', async () => {
    const { res, client } = await open();
    assert.equal(client.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(client.headers['cache-control'], 'no-cache, no-transform');
    assert.equal(client.headers['x-accel-buffering'], 'no');
    assert.equal(client.headers['x-request-id'], 'r1');
    const writer = new SseWriter(res);
    assert.equal(writer.write(`${dataLine({ a: 1 })}${eventLine('done', { b: 2 })}`), true);
    await writer.drained();
    writer.end(dataLine({ c: 3 }));
    writer.end(); // twice is harmless
    let body = '';
    for await (const chunk of client) body += String(chunk);
    assert.equal(body, 'data: {"a":1}\n\nevent: done\ndata: {"b":2}\n\ndata: {"c":3}\n\n');
  });

  it('sends the head with the first event when it is written in the same turn', async () => {
    const served = new Promise<ServerResponse>((resolve) => (nextResponse = resolve));
    const request = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const res = await served;
    const writer = new SseWriter(res);
    writer.start({ 'x-request-id': 'r2' });
    writer.write(dataLine({ first: true }));
    writer.end('data: [DONE]\n\n');
    const [client] = (await once(request, 'response')) as [IncomingMessage];
    assert.equal(client.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(client.headers['x-request-id'], 'r2');
    let body = '';
    for await (const chunk of client) body += String(chunk);
    assert.equal(body, 'data: {"first":true}\n\ndata: [DONE]\n\n');
  });

  it('waits for drain while the client does not read, and goes on when it does', async () => {
    const { res, client } = await open();
    client.pause();
    const writer = new SseWriter(res);
    const big = `data: ${'x'.repeat(1 << 20)}\n\n`;
    let waited = false;
    // Write until a write has to wait (the socket and the client's buffers are full).
    for (let i = 0; i < 64 && !waited; i++) {
      if (writer.write(big)) continue;
      let done = false;
      const pending = writer.drained().then(() => (done = true));
      await sleep(20);
      if (!done) {
        waited = true;
        client.resume();
        await pending;
      }
    }
    assert.ok(waited, 'a write waited for the slow client');
    writer.end();
    client.resume();
    await once(client, 'end');
  });

  it('a closed connection releases a waiting write, and later writes do nothing', async () => {
    const { res, client } = await open();
    client.pause();
    const writer = new SseWriter(res);
    const big = `data: ${'y'.repeat(1 << 20)}\n\n`;
    let pending: Promise<void> | null = null;
    for (let i = 0; i < 64 && !pending; i++) {
      if (writer.write(big)) continue;
      let done = false;
      const write = writer.drained().then(() => void (done = true));
      await sleep(20);
      if (!done) pending = write;
    }
    assert.ok(pending, 'a write was waiting');
    client.destroy();
    await pending; // resolves on close instead of hanging
    assert.equal(writer.open, false);
    assert.equal(writer.write('data: after\n\n'), true);
    await writer.drained();
    writer.end();
  });
});
