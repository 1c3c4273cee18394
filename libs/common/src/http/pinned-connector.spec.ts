import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OutboundRequestError } from './outbound-request.error.js';
import { pinnedConnector } from './pinned-connector.js';

function connect(connector: ReturnType<typeof pinnedConnector>, port: number, hostname = 'media.test'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    connector({ hostname, host: `${hostname}:${port}`, protocol: 'http:', port: String(port) }, (err, socket) => {
      if (err !== null) reject(err);
      else resolve(socket);
    });
  });
}

describe('pinnedConnector', () => {
  let server: Server;
  let port: number;
  const requests: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('dials the pinned address, not the host name it is given', async () => {
    const socket = await connect(pinnedConnector({ address: '127.0.0.1', allowPrivate: true, connectTimeoutMs: 2_000 }), port, 'does-not-resolve.invalid');
    try {
      assert.equal(socket.remoteAddress, '127.0.0.1');
      assert.equal(socket.remotePort, port);
    } finally {
      socket.destroy();
    }
  });

  it('re-checks the peer after connecting and hands back no socket when it is not allowed', async () => {
    // Pinned to loopback with private addresses refused: only the post-connect check can stop it.
    const connector = pinnedConnector({ address: '::ffff:127.0.0.1', allowPrivate: false, connectTimeoutMs: 2_000 });
    await assert.rejects(connect(connector, port), (err: unknown) => {
      assert.ok(err instanceof OutboundRequestError);
      assert.equal(err.reason, 'address_not_allowed');
      assert.match(err.detail, /loopback/);
      assert.equal(err.message, 'the address connected to is not allowed');
      return true;
    });
    assert.deepEqual(requests, [], 'nothing was written on the refused connection');
  });

  it('accepts only an IP address to pin', () => {
    assert.throws(() => pinnedConnector({ address: 'example.com', allowPrivate: true, connectTimeoutMs: 1_000 }), TypeError);
  });
});
