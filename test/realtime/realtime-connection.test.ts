import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../libs/common/index.js';
import { IdentityService } from '../../src/modules/identity/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { connectReady, newTicket, openSession, RealtimeClient, SESSIONS } from './realtime-helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const clock = new ManualClock();

describe('realtime connection: authentication, lease, close codes', () => {
  let t: TestApp;
  let account: TestAccount;
  fundedAppForSuite({ creditUsd: 25, environment: 'test', clock, env: { REALTIME_LEASE_MS: '3000' } }, (booted) => ({ t, account } = booted));

  const fresh = () => createAccount(t, { creditUsd: 5, environment: 'test' });
  const closeSession = (key: string, id: string) => t.request(`${SESSIONS}/${encodeURIComponent(id)}`, { method: 'DELETE', key });

  it('authenticates with the ticket: session.ready with sessionId, expiresAt and the budget; GET shows it connected', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client, ready } = await connectReady(session.url, session.token);
    assert.deepEqual(ready, { type: 'session.ready', sessionId: session.sessionId, expiresAt: session.expiresAt, budget: { maxCostUsd: 1, allocatedUsd: 0, remainingUsd: 1 } });
    const read = (await (await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { key: owner.key })).json()) as { connected: boolean };
    assert.equal(read.connected, true);
    assert.deepEqual(await client.close(), { code: 1000, reason: '' });
    // A clean close frees the session at once: a new ticket connects without waiting for the lease.
    const ticket = await newTicket(t, owner, session.sessionId);
    const again = await connectReady(session.url, ticket.token);
    await again.client.close();
    await closeSession(owner.key, session.sessionId);
  });

  it('a silent connection is closed with 4408 between 5 and 6 seconds', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const started = Date.now();
    const client = RealtimeClient.connect(session.url);
    await client.opened;
    const { code } = await client.closed;
    const elapsed = Date.now() - started;
    assert.equal(code, 4408);
    assert.ok(elapsed >= 5000 && elapsed < 6000, `closed after ${elapsed} ms`);
    await closeSession(owner.key, session.sessionId);
  });

  it('a bad, used or expired ticket, a ticket of another session, or another first frame: close 4401', async () => {
    const owner = await fresh();
    const other = await fresh();
    const session = await openSession(t, owner);
    const otherSession = await openSession(t, other);
    const attempt = async (token: unknown, url = session.url, frame?: unknown): Promise<number> => {
      const client = RealtimeClient.connect(url);
      await client.opened;
      client.send(frame ?? { type: 'session.authenticate', token });
      const { code } = await client.closed;
      assert.equal(client.frames.length, 0, 'no frame before the close');
      return code;
    };
    assert.equal(await attempt('rt_' + 'A'.repeat(43)), 4401, 'unknown ticket');
    assert.equal(await attempt('not a ticket'), 4401, 'malformed ticket');
    assert.equal(await attempt(12), 4401, 'token not a string');
    assert.equal(await attempt(otherSession.token), 4401, "another session's ticket");
    assert.equal(await attempt(session.token, session.url.replace(/sessionId=.*/, 'sessionId=')), 4401, 'no session id in the url');
    assert.equal(await attempt(undefined, session.url, { type: 'turn.commit', turnId: 't1', text: 'hi' }), 4401, 'a turn first');
    assert.equal(await attempt(undefined, session.url, 'not json'), 4401, 'not JSON first');
    // The other session's ticket was not used up by the attempt on the wrong session.
    const theirs = await connectReady(otherSession.url, otherSession.token);
    await theirs.client.close();
    // Used: once connected, the same ticket never works again.
    const first = await connectReady(session.url, session.token);
    await first.client.close();
    assert.equal(await attempt(session.token), 4401, 'used ticket');
    // Expired: 60 s on the (injected) clock.
    const ticket = await newTicket(t, owner, session.sessionId);
    clock.advance(60_001);
    assert.equal(await attempt(ticket.token), 4401, 'expired ticket');
    const fresher = await newTicket(t, owner, session.sessionId);
    clock.advance(59_000);
    const inTime = await connectReady(session.url, fresher.token);
    await inTime.client.close();
    await closeSession(owner.key, session.sessionId);
    await closeSession(other.key, otherSession.sessionId);
  });

  it('two connections racing for one ticket: exactly one gets session.ready, the other 4401', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const clients = [RealtimeClient.connect(session.url), RealtimeClient.connect(session.url)];
    await Promise.all(clients.map((c) => c.opened));
    for (const client of clients) client.authenticate(session.token);
    const outcomes = await Promise.all(
      clients.map(async (client) => {
        const result = await Promise.race([client.next('session.ready').then(() => 'ready'), client.closed.then(({ code }) => String(code))]);
        return result;
      }),
    );
    assert.deepEqual(outcomes.sort(), ['4401', 'ready']);
    for (const client of clients) client.ws.terminate();
    await closeSession(owner.key, session.sessionId);
  });

  it('a second live connection to a session is closed with 4409; the first keeps working', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    const ticket = await newTicket(t, owner, session.sessionId);
    const newcomer = RealtimeClient.connect(session.url);
    await newcomer.opened;
    newcomer.authenticate(ticket.token);
    assert.equal((await newcomer.closed).code, 4409);
    client.send({ type: 'hello' });
    assert.equal((await client.next('error')).code, 'realtime.unknown_frame_type');
    await client.close();
    await closeSession(owner.key, session.sessionId);
  });

  it('a client killed without a close frame: a new connection succeeds (the lease is freed)', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const child = fork(join(here, 'support', 'ws-client-child.js'), [session.url, session.token], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const said = await new Promise<unknown>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`client child exited early (${code})`)));
    });
    assert.equal((said as { type: string }).type, 'session.ready');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const ticket = await newTicket(t, owner, session.sessionId);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const client = RealtimeClient.connect(session.url);
      await client.opened;
      client.authenticate(ticket.token);
      const outcome = await Promise.race([client.next('session.ready').then(() => 'ready'), client.closed.then(({ code }) => code)]);
      if (outcome === 'ready') {
        await client.close();
        break;
      }
      assert.equal(outcome, 4409);
      assert.ok(Date.now() < deadline, 'a new connection within 90 s');
      // 4409 used the ticket: ask for another and try again shortly.
      Object.assign(ticket, await newTicket(t, owner, session.sessionId));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await closeSession(owner.key, session.sessionId);
  });

  it('DELETE closes the socket with 4410; the session takes no new connection', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    const ticket = await newTicket(t, owner, session.sessionId);
    assert.equal((await closeSession(owner.key, session.sessionId)).status, 200);
    assert.equal((await client.closed).code, 4410);
    // Its unused ticket now meets a session that has ended: 4410 (create a new session), not 4401
    // (ask for a ticket), since asking for one answers 409 audio.session_closed. The ticket the
    // first connection used stays DESIGN's "used ticket": 4401.
    const late = RealtimeClient.connect(session.url);
    await late.opened;
    late.authenticate(ticket.token);
    assert.deepEqual(await late.closed, { code: 4410, reason: 'the session was closed or has expired; create a new one' });
    assert.equal((await t.request(`/v1/audio/realtime/sessions/${session.sessionId}/tickets`, { method: 'POST', key: owner.key })).status, 409);
    const used = RealtimeClient.connect(session.url);
    await used.opened;
    used.authenticate(session.token);
    assert.equal((await used.closed).code, 4401);
    void account;
  });

  it('the session ends at expiresAt: its connection is closed with 4410', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    // 1.5 s before the end (on the injected clock); the connection's timer runs on real time from there.
    clock.advance(50 * 60_000 - 1500);
    const ticket = await newTicket(t, owner, session.sessionId);
    // A ticket never outlives its session: 1.5 s left, so 1.5 s, not 60.
    assert.equal(ticket.tokenExpiresAt, session.expiresAt);
    const { client } = await connectReady(session.url, ticket.token);
    assert.deepEqual(await client.closed, { code: 4410, reason: 'the session expired' });
    // Once the session has ended, its tickets have too (DESIGN: an expired ticket is 4401).
    const spare = await newTicket(t, owner, session.sessionId);
    clock.advance(1500);
    const late = RealtimeClient.connect(session.url);
    await late.opened;
    late.authenticate(spare.token);
    assert.equal((await late.closed).code, 4401);
  });

  it('a key revoked while connected: its next turn closes the connection with 4401, nothing is created', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    await t.app.get(IdentityService).revokeApiKey(owner.keyId);
    client.send({ type: 'turn.commit', turnId: 'after-revoke', text: 'Should not speak' });
    assert.equal((await client.closed).code, 4401);
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audio_task WHERE api_key_id = $1`, [owner.keyId]);
    assert.equal(n, 0);
  });

  it('a frame over the size limit closes the connection with 1009', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    client.send({ type: 'turn.commit', turnId: 'big', text: 'x'.repeat(40_000) });
    assert.equal((await client.closed).code, 1009);
    await closeSession(owner.key, session.sessionId);
  });
});
