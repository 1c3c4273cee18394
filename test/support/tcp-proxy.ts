import { createServer, type Server, type Socket, connect } from 'node:net';
import { TEST_REDIS_URL } from './test-app.js';

/**
 * A TCP proxy in front of a real server (Redis, PostgreSQL) that a test can cut — open
 * connections reset, new ones refused, as when the server goes down — and restore on the same
 * port. Only the app under test goes through it, so other suites sharing the server are untouched.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private listenPort = 0;
  /** Set by `blackhole()`: bytes are swallowed, nothing is reset. */
  private swallowing = false;

  private constructor(private readonly target: { host: string; port: number }) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.listen();
    return proxy;
  }

  /** The port the proxy listens on (chosen at start, kept across cut and restore). */
  get port(): number {
    return this.listenPort;
  }

  /** Resets every open connection and refuses new ones until `restore()`. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * A silent partition: every connection stays open but no byte goes through either way (no
   * reset, as when a network drops packets), new ones included, until `restore()`, which resets
   * the swallowed connections (their streams lost bytes) and forwards again.
   */
  blackhole(): void {
    this.swallowing = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.on('data', () => undefined);
    }
  }

  async restore(): Promise<void> {
    if (this.swallowing) {
      this.swallowing = false;
      for (const socket of this.sockets) socket.resetAndDestroy();
      this.sockets.clear();
    }
    if (!this.server) await this.listen();
  }

  private async listen(): Promise<void> {
    const server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listenPort, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (typeof address === 'object' && address) this.listenPort = address.port;
  }

  private pipe(client: Socket): void {
    if (this.swallowing) {
      this.sockets.add(client);
      client.on('error', () => undefined);
      client.on('close', () => this.sockets.delete(client));
      client.on('data', () => undefined);
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined); // a reset is what cut() is for
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  }
}

/** A proxy in front of the tests' Redis, and the REDIS_URL that reaches it through the proxy. */
export async function proxyToTestRedis(): Promise<{ proxy: TcpProxy; url: string }> {
  const redis = new URL(TEST_REDIS_URL);
  const proxy = await TcpProxy.start({ host: redis.hostname, port: Number(redis.port || 6379) });
  redis.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: redis.href };
}
