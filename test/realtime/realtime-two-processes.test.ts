import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';
import { connectReady, newTicket, openSession, RealtimeClient, SESSIONS } from './realtime-helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const LEASE_MS = '3000';

/**
 * Two API processes on one database and one Redis: the connection lease is shared, so a session
 * has one live connection across both; an API process killed with its connection leaves the
 * lease to expire (REALTIME_LEASE_MS, shortened here), after which the other process takes the
 * session; DELETE on one process closes the socket held by the other.
 */
describe('realtime across two API processes sharing Redis', () => {
  let a: TestApp;
  let account: TestAccount;
  const children: ChildProcess[] = [];

  before(async () => {
    a = await bootTestApp({ label: 'rttwo', env: { REALTIME_LEASE_MS: LEASE_MS } });
    account = await createAccount(a, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await a.close();
  });

  /** Another API process of the same database and queue prefix; its base URL. */
  async function startApi(): Promise<{ child: ChildProcess; baseUrl: string }> {
    const port = await freePort();
    const env = {
      NODE_ENV: 'test',
      PORT: String(port),
      DATABASE_URL: a.db.url,
      DATABASE_CREATE_IF_MISSING: 'false',
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: a.queuePrefix,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MEDIA_DIR: a.mediaDir,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'silent',
      DEMO_SEED: 'false',
      REALTIME_LEASE_MS: LEASE_MS,
    };
    const child = fork(join(here, '..', 'audio', 'support', 'speech-api-child.js'), [], { env: { ...process.env, SVC_CHILD_ENV: JSON.stringify(env) }, stdio: 'inherit' });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`API child exited early (${code})`)));
    });
    return { child, baseUrl: `http://127.0.0.1:${port}` };
  }

  const onProcess = (url: string, baseUrl: string): string => url.replace(/^ws:\/\/[^/]+/, baseUrl.replace('http://', 'ws://'));

  async function attempt(url: string, token: string): Promise<number | 'ready'> {
    const client = RealtimeClient.connect(url);
    await client.opened;
    client.authenticate(token);
    const outcome = await Promise.race([client.next('session.ready').then(() => 'ready' as const), client.closed.then(({ code }) => code)]);
    if (outcome === 'ready') await client.close();
    return outcome;
  }

  it('a second connection on the other process gets 4409; after a kill of the process holding it, the lease expires and the other takes over', async () => {
    const b = await startApi();
    const session = await openSession(a, account);
    const onA = await connectReady(session.url, session.token);
    const ticket = await newTicket(a, account, session.sessionId);
    assert.equal(await attempt(onProcess(session.url, b.baseUrl), ticket.token), 4409, 'the newcomer on the other process');
    await onA.client.close();

    // Now B holds the session, and B dies without any close.
    const onB = await connectReady(onProcess(session.url, b.baseUrl), (await newTicket(a, account, session.sessionId)).token);
    const exited = new Promise((resolve) => b.child.once('exit', resolve));
    b.child.kill('SIGKILL');
    await exited;
    await onB.client.closed;
    assert.equal(await attempt(session.url, (await newTicket(a, account, session.sessionId)).token), 4409, 'the dead process still holds the lease');
    const deadline = Date.now() + 90_000;
    let outcome: number | 'ready' = 4409;
    while (outcome !== 'ready' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      outcome = await attempt(session.url, (await newTicket(a, account, session.sessionId)).token);
      assert.ok(outcome === 'ready' || outcome === 4409, String(outcome));
    }
    assert.equal(outcome, 'ready', 'a new connection once the lease expired (within 90 s)');
    await a.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { method: 'DELETE', key: account.key });
  });

  it('DELETE on one process closes the socket held by the other (4410)', async () => {
    const b = await startApi();
    const session = await openSession(a, account);
    const onB = await connectReady(onProcess(session.url, b.baseUrl), session.token);
    const answer = await a.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { method: 'DELETE', key: account.key });
    assert.equal(answer.status, 200);
    assert.equal((await onB.client.closed).code, 4410);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
