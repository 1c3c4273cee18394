import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { GuardedHttpClient, OutboundRequestError, type HostLookup, type OutboundFailureReason } from './guarded-http-client.js';

/** A local server that records every connection and request it sees. */
interface TestServer {
  port: number;
  /** `METHOD /path` of every request received. */
  hits: string[];
  connections: number;
  close(): Promise<void>;
}

async function startServer(options: { key: Buffer; cert: Buffer } | undefined = undefined): Promise<TestServer> {
  const hits: string[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    hits.push(`${req.method} ${req.url}`);
    route(req, res);
  };
  const server: Server = options === undefined ? createHttpServer(handler) : createHttpsServer(options, handler);
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function route(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://local');
  switch (url.pathname) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' }).end('hello');
      return;
    case '/echo': {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            method: req.method,
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            servername: (req.socket as TLSSocket).servername ?? null,
          }),
        );
      });
      return;
    }
    case '/redirect':
      res.writeHead(302, { location: '/target' }).end('moved');
      return;
    case '/target':
      res.writeHead(200).end('you followed the redirect');
      return;
    case '/bytes': {
      const size = Number(url.searchParams.get('n'));
      res.writeHead(200, { 'content-length': String(size) }).end(Buffer.alloc(size, 0x61));
      return;
    }
    case '/chunked-big':
      // No Content-Length: chunked, 3 × 64 KiB.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(65_536, 1));
      res.write(Buffer.alloc(65_536, 2));
      res.end(Buffer.alloc(65_536, 3));
      return;
    case '/length-big':
      // Announces 10 MiB, sends 1 KiB and then stalls: the client must not wait for the rest.
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(1024));
      return;
    case '/slow-head':
      return; // never answers
    case '/slow-body':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
      return; // never ends
    default:
      res.writeHead(404).end();
  }
}

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof OutboundRequestError, `expected an OutboundRequestError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

/** `detail` (the log's text) is matched: the client-facing message leaves addresses out. */
async function assertReason(promise: Promise<unknown>, reason: OutboundFailureReason, detail?: RegExp): Promise<void> {
  const err = await failure(promise);
  assert.equal(err.reason, reason, err.detail);
  if (detail !== undefined) assert.match(err.detail, detail);
}

const fixedLookup =
  (table: Record<string, string[]>): HostLookup =>
  async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  };

describe('GuardedHttpClient refuses what it must, before connecting (allowPrivate false)', () => {
  let server: TestServer;
  let client: GuardedHttpClient;

  before(async () => {
    server = await startServer();
    client = new GuardedHttpClient({
      allowHttp: true,
      allowPrivate: false,
      lookup: fixedLookup({
        'internal.test': ['10.0.0.7'],
        'loopback.test': ['127.0.0.1'],
        'mixed.test': ['93.184.215.14', '127.0.0.1'],
        'mapped.test': ['::ffff:127.0.0.1'],
        'public.test': ['93.184.215.14'],
        'empty.test': [],
      }),
    });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  /** The refusal must come before any connection: the local server sees nothing at all. */
  async function refusedWithoutConnecting(url: string, reason: OutboundFailureReason, message?: RegExp): Promise<void> {
    const connections = server.connections;
    const started = Date.now();
    await assertReason(client.request(url, { timeoutMs: 2_000 }), reason, message);
    assert.ok(Date.now() - started < 1_000, 'refused at once, not after a connection attempt');
    assert.equal(server.connections, connections, 'no connection was made');
    assert.deepEqual(server.hits, [], 'the server saw no request');
  }

  it('refuses the loopback literal 127.0.0.1', async () => {
    await refusedWithoutConnecting(`http://127.0.0.1:${server.port}/ok`, 'address_not_allowed', /loopback/);
  });

  it('refuses the name localhost (real resolver)', async () => {
    const real = new GuardedHttpClient({ allowHttp: true, allowPrivate: false });
    try {
      const connections = server.connections;
      await assertReason(real.request(`http://localhost:${server.port}/ok`), 'address_not_allowed', /loopback/);
      assert.equal(server.connections, connections);
      assert.deepEqual(server.hits, []);
    } finally {
      await real.close();
    }
  });

  it('refuses IPv4-mapped IPv6 loopback [::ffff:127.0.0.1] and IPv6 loopback [::1]', async () => {
    await refusedWithoutConnecting(`http://[::ffff:127.0.0.1]:${server.port}/ok`, 'address_not_allowed', /127\.0\.0\.1 is in the loopback range/);
    await refusedWithoutConnecting(`http://[::1]:${server.port}/ok`, 'address_not_allowed', /loopback/);
  });

  it('refuses decimal and hex encodings of 127.0.0.1 (http://2130706433/, http://0x7f.1/)', async () => {
    await refusedWithoutConnecting(`http://2130706433:${server.port}/ok`, 'address_not_allowed', /loopback/);
    await refusedWithoutConnecting(`http://0x7f.1:${server.port}/ok`, 'address_not_allowed', /loopback/);
    await refusedWithoutConnecting('http://2130706433/', 'address_not_allowed', /loopback/);
    await refusedWithoutConnecting('http://0x7f.1/', 'address_not_allowed', /loopback/);
  });

  it('refuses 0.0.0.0, which Linux would connect to the local host', async () => {
    await refusedWithoutConnecting(`http://0.0.0.0:${server.port}/ok`, 'address_not_allowed', /unspecified/);
  });

  it('refuses the metadata address 169.254.169.254 and private 10.x', async () => {
    await refusedWithoutConnecting('http://169.254.169.254/latest/meta-data/', 'address_not_allowed', /linkLocal/);
    await refusedWithoutConnecting('https://10.1.2.3/', 'address_not_allowed', /private/);
  });

  it('refuses a host name that resolves to a private or loopback address', async () => {
    await refusedWithoutConnecting(`http://loopback.test:${server.port}/ok`, 'address_not_allowed', /loopback\.test: 127\.0\.0\.1/);
    await refusedWithoutConnecting('https://internal.test/hook', 'address_not_allowed', /private/);
    await refusedWithoutConnecting(`http://mapped.test:${server.port}/ok`, 'address_not_allowed', /loopback/);
  });

  it('tells the client that the address is not allowed, never what the name resolved to (the log has it)', async () => {
    const err = await failure(client.request(`http://loopback.test:${server.port}/ok`, { timeoutMs: 2_000 }));
    assert.equal(err.message, 'the address of loopback.test is not allowed');
    assert.equal(err.detail, 'loopback.test: 127.0.0.1 is in the loopback range');
    const unresolved = await failure(client.request('https://unknown.test/', { timeoutMs: 2_000 }));
    assert.equal(unresolved.message, 'cannot resolve unknown.test');
    assert.notEqual(unresolved.detail, unresolved.message);
  });

  it('refuses a name when any one of its addresses is private (every address is checked)', async () => {
    await refusedWithoutConnecting(`http://mixed.test:${server.port}/ok`, 'address_not_allowed', /127\.0\.0\.1/);
  });

  it('refuses ports other than 80 and 443 on public addresses', async () => {
    await refusedWithoutConnecting('https://93.184.215.14:8443/', 'address_not_allowed', /port 8443/);
    await refusedWithoutConnecting('http://public.test:22/', 'address_not_allowed', /port 22/);
  });

  it('reports names that do not resolve as dns_failed', async () => {
    await refusedWithoutConnecting('https://unknown.test/', 'dns_failed', /unknown\.test/);
    await refusedWithoutConnecting('https://empty.test/', 'dns_failed', /no address/);
  });

  it('refuses plain http when allowHttp is false, even to an allowed address', async () => {
    const httpsOnly = new GuardedHttpClient({ allowHttp: false, allowPrivate: true });
    try {
      const connections = server.connections;
      await assertReason(httpsOnly.request(`http://127.0.0.1:${server.port}/ok`), 'scheme_not_allowed');
      assert.equal(server.connections, connections);
      assert.deepEqual(server.hits, []);
    } finally {
      await httpsOnly.close();
    }
  });

  it('refuses user info, other schemes and unparseable URLs', async () => {
    await refusedWithoutConnecting(`http://user:secret@127.0.0.1:${server.port}/ok`, 'invalid_url');
    await refusedWithoutConnecting('ftp://public.test/file', 'scheme_not_allowed');
    await refusedWithoutConnecting('::not a url::', 'invalid_url');
  });
});

describe('GuardedHttpClient exchanges (allowHttp and allowPrivate true)', () => {
  let server: TestServer;
  let client: GuardedHttpClient;
  let base: string;

  before(async () => {
    server = await startServer();
    base = `http://127.0.0.1:${server.port}`;
    client = new GuardedHttpClient({
      allowHttp: true,
      allowPrivate: true,
      lookup: fixedLookup({ 'media.test': ['127.0.0.1'] }),
    });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('returns status, headers, body and the address connected to', async () => {
    const response = await client.request(`${base}/ok`);
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-test'], 'yes');
    assert.equal(response.headers['content-type'], 'text/plain');
    assert.equal(response.body.toString('utf8'), 'hello');
    assert.equal(response.remoteAddress, '127.0.0.1');
  });

  it('delivers a POST body and its headers; a caller Host header is ignored', async () => {
    const response = await client.request(`${base}/echo?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', host: 'evil.example' },
      body: JSON.stringify({ hello: 'world' }),
    });
    assert.equal(response.status, 200);
    const seen = JSON.parse(response.body.toString('utf8')) as { method: string; headers: Record<string, string>; body: string };
    assert.equal(seen.method, 'POST');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(seen.headers['webhook-id'], 'msg_1');
    assert.equal(seen.headers.host, `127.0.0.1:${server.port}`);
    assert.equal(seen.body, '{"hello":"world"}');
    assert.ok(server.hits.includes('POST /echo?x=1'));
  });

  it('connects to the resolved address while Host stays the URL host name', async () => {
    const response = await client.request(`http://media.test:${server.port}/echo`);
    const seen = JSON.parse(response.body.toString('utf8')) as { headers: Record<string, string> };
    assert.equal(seen.headers.host, `media.test:${server.port}`);
    assert.equal(response.remoteAddress, '127.0.0.1');
  });

  it('returns a redirect as it is and never follows it', async () => {
    const response = await client.request(`${base}/redirect`);
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/target');
    assert.equal(response.body.toString('utf8'), 'moved');
    assert.ok(server.hits.includes('GET /redirect'));
    assert.ok(!server.hits.includes('GET /target'), 'the redirect target was never requested');
  });

  it('refuses a chunked body past maxBytes with too_large', async () => {
    await assertReason(client.request(`${base}/chunked-big`, { maxBytes: 100_000 }), 'too_large', /exceeds 100000 bytes/);
    // The same body under the cap is delivered whole.
    const whole = await client.request(`${base}/chunked-big`, { maxBytes: 3 * 65_536 });
    assert.equal(whole.body.length, 3 * 65_536);
  });

  it('refuses at once a Content-Length above maxBytes, without waiting for the body', async () => {
    const started = Date.now();
    await assertReason(client.request(`${base}/length-big`, { maxBytes: 1_000_000, timeoutMs: 5_000 }), 'too_large', /announced/);
    assert.ok(Date.now() - started < 2_000, 'failed on the announced length, not on a timeout');
    await assertReason(client.request(`${base}/bytes?n=2000`, { maxBytes: 1999 }), 'too_large');
    assert.equal((await client.request(`${base}/bytes?n=2000`, { maxBytes: 2000 })).body.length, 2000);
  });

  it('does not apply the cap to the Content-Length of a HEAD response', async () => {
    const response = await client.request(`${base}/bytes?n=5000`, { method: 'HEAD', maxBytes: 10 });
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-length'], '5000');
    assert.equal(response.body.length, 0);
  });

  it('times out a server that never answers', async () => {
    const started = Date.now();
    await assertReason(client.request(`${base}/slow-head`, { timeoutMs: 300 }), 'timeout');
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 250 && elapsed < 2_000, `timed out after ${elapsed} ms`);
  });

  it('times out a body that stalls: the timeout covers the whole exchange', async () => {
    const started = Date.now();
    await assertReason(client.request(`${base}/slow-body`, { timeoutMs: 300 }), 'timeout');
    assert.ok(Date.now() - started < 2_000);
  });

  it('times out a name lookup that never answers', async () => {
    const stuck = new GuardedHttpClient({ allowHttp: true, allowPrivate: true, lookup: () => new Promise(() => undefined) });
    try {
      await assertReason(stuck.request('http://stuck.test/', { timeoutMs: 200 }), 'timeout');
    } finally {
      await stuck.close();
    }
  });

  it('tries the next checked address when connecting to the first one fails', async () => {
    // 127.0.0.2 is loopback too, but nothing listens there on this port: connection refused.
    const fallback = new GuardedHttpClient({
      allowHttp: true,
      allowPrivate: true,
      lookup: fixedLookup({ 'two.test': ['127.0.0.2', '127.0.0.1'] }),
    });
    try {
      const response = await fallback.request(`http://two.test:${server.port}/ok`, { method: 'POST', body: 'x' });
      assert.equal(response.status, 200);
      assert.equal(response.remoteAddress, '127.0.0.1');
    } finally {
      await fallback.close();
    }
  });

  it('reports a refused connection as network', async () => {
    const closed = await startServer();
    const port = closed.port;
    await closed.close();
    await assertReason(client.request(`http://127.0.0.1:${port}/ok`), 'network', /ECONNREFUSED 127\.0\.0\.1/);
    // The socket error names the address dialled: the client-facing message keeps the code only.
    assert.equal((await failure(client.request(`http://127.0.0.1:${port}/ok`))).message, 'the connection failed (ECONNREFUSED)');
  });

  it('reuses pooled connections across requests to the same origin and address', async () => {
    const pooledServer = await startServer();
    try {
      for (let i = 0; i < 3; i++) {
        assert.equal((await client.request(`http://127.0.0.1:${pooledServer.port}/ok`)).status, 200);
        // undici marks the connection free on the next tick; without a gap a second one opens.
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(pooledServer.hits.length, 3);
      assert.equal(pooledServer.connections, 1, 'one kept-alive connection served all three');
    } finally {
      await pooledServer.close();
    }
  });

  it('keeps a bounded number of pools', async () => {
    const small = new GuardedHttpClient({ allowHttp: true, allowPrivate: true, maxPools: 1 });
    const other = await startServer();
    try {
      assert.equal((await small.request(`${base}/ok`)).status, 200);
      assert.equal((await small.request(`http://127.0.0.1:${other.port}/ok`)).status, 200);
      assert.equal((await small.request(`${base}/ok`)).status, 200);
    } finally {
      await small.close();
      await other.close();
    }
    await assertReason(small.request(`${base}/ok`), 'network', /closed/);
  });

  it('streams a body with requestStream, capped at maxBytes', async () => {
    const response = await client.requestStream(`${base}/bytes?n=200000`);
    assert.equal(response.status, 200);
    let total = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) total += chunk.length;
    assert.equal(total, 200_000);

    const capped = await client.requestStream(`${base}/chunked-big`, { maxBytes: 100_000 });
    await assertReason(
      (async () => {
        for await (const chunk of capped.body as AsyncIterable<Buffer>) void chunk;
      })(),
      'too_large',
    );
  });

  it('downloads to a file, and removes the partial file when the cap is passed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'guarded-download-'));
    try {
      const target = join(dir, 'video.bin');
      const done = await client.download(`${base}/bytes?n=150000`, target);
      assert.equal(done.status, 200);
      assert.equal(done.bytes, 150_000);
      assert.equal(readFileSync(target).length, 150_000);

      const partial = join(dir, 'partial.bin');
      await assertReason(client.download(`${base}/chunked-big`, partial, { maxBytes: 100_000 }), 'too_large');
      assert.equal(existsSync(partial), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A throwaway self-signed certificate for `media.test`, or undefined without openssl. */
function selfSignedCertificate(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'guarded-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=media.test',
        '-addext', 'subjectAltName=DNS:media.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const certificate = selfSignedCertificate();

describe('GuardedHttpClient over TLS, pinned to the checked address', { skip: certificate === undefined && 'openssl is not available' }, () => {
  let server: TestServer;
  let client: GuardedHttpClient;

  before(async () => {
    server = await startServer(certificate);
    client = new GuardedHttpClient({
      allowHttp: false,
      allowPrivate: true,
      ca: certificate?.cert,
      lookup: fixedLookup({ 'media.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] }),
    });
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('dials the checked address with SNI and Host set to the host name', async () => {
    const response = await client.request(`https://media.test:${server.port}/echo`);
    assert.equal(response.status, 200);
    assert.equal(response.remoteAddress, '127.0.0.1');
    const seen = JSON.parse(response.body.toString('utf8')) as { headers: Record<string, string>; servername: string | null };
    assert.equal(seen.servername, 'media.test');
    assert.equal(seen.headers.host, `media.test:${server.port}`);
  });

  it('checks the certificate against the host name, not the address dialled', async () => {
    await assertReason(client.request(`https://other.test:${server.port}/ok`), 'network', /altnames|ERR_TLS_CERT_ALTNAME_INVALID/i);
    await assertReason(client.request(`https://127.0.0.1:${server.port}/ok`), 'network');
    assert.ok(!server.hits.includes('GET /ok'), 'no request went over an unverified connection');
  });
});
