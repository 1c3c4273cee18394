/**
 * Attacked: the per-process API key cache serving a revoked key (docs/decisions.md › Platform,
 * "Key cache with instant revocation").
 * How: three service instances on one database and one Redis prefix: the test's own app `t`
 * (its Redis through proxy T) and two API processes of their own, A (Redis direct) and B (Redis
 * through proxy P, which the test cuts to make B deaf to the invalidation channel).
 * B's partition is also made silent (the proxy swallows bytes, resets nothing): the subscriber's
 * heartbeat notices it.
 * Asserted: what the client sees (200, 401 and the envelope, the revoke's 503 `admin.unavailable`)
 * and what holds inside (B's cache counters: hit / miss / bypass, the key rows).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ApiChild, type ChildKeyCacheState, startApiChild } from '../support/api-children.js';
import { eventually } from '../support/eventually.js';
import { createAccount, issueKey } from '../support/factories.js';
import { proxyToTestRedis, type TcpProxy } from '../support/tcp-proxy.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

const WALLET = '/api/svc/v1/wallet';

describe('key cache: revocation across processes', () => {
  let t: TestApp;
  let a: ApiChild;
  let b: ApiChild;
  let proxyT: TcpProxy;
  let proxyB: TcpProxy;

  before(async () => {
    const forT = await proxyToTestRedis();
    proxyT = forT.proxy;
    // API role: no queue workers, whose blocking Redis connections are not what this test is about.
    t = await bootTestApp({ label: 'keycache', env: { REDIS_URL: forT.url, APP_ROLE: 'api' } });
    const forB = await proxyToTestRedis();
    proxyB = forB.proxy;
    [a, b] = await Promise.all([startApiChild(t), startApiChild(t, { REDIS_URL: forB.url })]);
  });
  after(async () => {
    await Promise.all([proxyT.restore(), proxyB.restore()]);
    await Promise.all([a?.stop(), b?.stop()]);
    await t.close();
    await Promise.all([proxyT.cut(), proxyB.cut()]);
  });

  /** The first authenticated request opens the subscriber; waits until Redis confirmed it. */
  async function subscribed(child: ApiChild, key: string): Promise<ChildKeyCacheState> {
    assert.equal((await child.request(WALLET, { key })).status, 200);
    return eventually(() => child.keyCache(), (s) => s.subscribed, 'invalidation channel subscribed', 30_000);
  }

  /** A request the child answers from its cache: the entry is there (a hit, no lookup). */
  async function servedFromCache(child: ApiChild, key: string): Promise<void> {
    // The first request after a clear is a miss that keeps the key; the next is a hit.
    assert.equal((await child.request(WALLET, { key })).status, 200);
    const before = await child.keyCache();
    assert.equal((await child.request(WALLET, { key })).status, 200);
    const after = await child.keyCache();
    assert.deepEqual([after.hit - before.hit, after.miss - before.miss, after.bypass - before.bypass], [1, 0, 0], 'served from the cache');
  }

  async function expectRevoked(response: Response): Promise<void> {
    assert.equal(response.status, 401);
    assert.deepEqual(await response.json(), { error: { code: 'wallet.unauthorized', message: 'API key has been revoked' } });
  }

  const revokeOn = (instance: { request: ApiChild['request'] }, keyId: string) => instance.request(`/admin/v1/api-keys/${keyId}/revoke`, { method: 'POST', admin: true });

  // Revoked on B, heard by A: A's subscription is a direct connection to Redis, as in production
  // (B's goes through a proxy in this test process, whose relaying may trail the test's own HTTP
  // requests: it made this test flaky when B was the listener).
  it('a key revoked through the admin API on process B is refused by process A on its very next request', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    await subscribed(a, account.key);
    await subscribed(b, account.key);
    await servedFromCache(a, account.key);
    await servedFromCache(b, account.key);

    const before = await a.keyCache();
    assert.ok(before.entries >= 1);
    const revoked = await revokeOn(b, account.keyId);
    assert.equal(revoked.status, 200);
    assert.equal(((await revoked.json()) as { status: string }).status, 'revoked');

    await expectRevoked(await a.request(WALLET, { key: account.key }));
    const after = await a.keyCache();
    assert.equal(after.received, before.received + 1, 'A heard the invalidation');
    assert.equal(after.hit, before.hit, 'A did not answer from its (stale) entry');
    assert.equal(after.miss, before.miss + 1, 'A read the key from PostgreSQL');
    // B, which revoked it, refuses it too (its own cache dropped it at once), and the row says revoked.
    await expectRevoked(await b.request(WALLET, { key: account.key }));
    const [row] = await t.db.query<{ status: string }>(`SELECT status FROM api_key WHERE id = $1`, [account.keyId]);
    assert.equal(row?.status, 'revoked');
  });

  it("while B's subscription is cut, B bypasses its cache: a key revoked meanwhile is refused, a valid one is served from PostgreSQL", async () => {
    const victim = await createAccount(t, { creditUsd: 1 });
    const survivor = await issueKey(t, victim.workspaceId);
    await subscribed(b, victim.key);
    await servedFromCache(b, victim.key);
    await servedFromCache(b, survivor.key);
    const beforeCut = await b.keyCache();
    assert.ok(beforeCut.entries >= 2);

    await proxyB.cut();
    const deaf = await eventually(() => b.keyCache(), (s) => !s.subscribed, 'B noticing the lost subscription', 30_000);
    assert.equal(deaf.losses, beforeCut.losses + 1);
    assert.equal(deaf.entries, 0, 'the cache is cleared when the subscription is lost');

    // A publishes the invalidation; B cannot hear it.
    const revoked = await revokeOn(a, victim.keyId);
    assert.equal(revoked.status, 200);

    await expectRevoked(await b.request(WALLET, { key: victim.key }));
    assert.equal((await b.request(WALLET, { key: survivor.key })).status, 200);
    assert.equal((await b.request(WALLET, { key: survivor.key })).status, 200);
    const whileDeaf = await b.keyCache();
    assert.equal(whileDeaf.bypass - deaf.bypass, 3, 'every request read PostgreSQL');
    assert.equal(whileDeaf.hit, deaf.hit, 'no request was answered from memory');
    assert.equal(whileDeaf.entries, 0, 'nothing is kept while deaf');

    await proxyB.restore();
    const back = await eventually(() => b.keyCache(), (s) => s.subscribed, 'B subscribing again', 30_000);
    assert.equal(back.subscriptions, deaf.subscriptions + 1);
    await servedFromCache(b, survivor.key);
    await expectRevoked(await b.request(WALLET, { key: victim.key }));
  });

  it("a subscription that dies silently (a partition, no reset) is noticed by the heartbeat and B's cache is bypassed", async () => {
    const victim = await createAccount(t, { creditUsd: 1 });
    const survivor = await issueKey(t, victim.workspaceId);
    await subscribed(b, victim.key);
    await servedFromCache(b, victim.key);
    await servedFromCache(b, survivor.key);
    const before = await b.keyCache();

    proxyB.blackhole();
    // Nothing is reset: only the unanswered PING tells B (within about 8 s).
    const deaf = await eventually(() => b.keyCache(), (s) => !s.subscribed, 'B noticing the silent loss', 30_000);
    assert.equal(deaf.losses, before.losses + 1);
    assert.equal(deaf.entries, 0);

    assert.equal((await revokeOn(a, victim.keyId)).status, 200);
    await expectRevoked(await b.request(WALLET, { key: victim.key }));
    assert.equal((await b.request(WALLET, { key: survivor.key })).status, 200);
    const whileDeaf = await b.keyCache();
    assert.equal(whileDeaf.bypass - deaf.bypass, 2, 'every request read PostgreSQL');
    assert.equal(whileDeaf.hit, deaf.hit);

    await proxyB.restore();
    await eventually(() => b.keyCache(), (s) => s.subscribed, 'B subscribing again', 30_000);
    await servedFromCache(b, survivor.key);
  });

  it('a revoke whose invalidation Redis does not take answers 503 admin.unavailable; the key is revoked, and a retry tells every process', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    await subscribed(b, account.key);
    await servedFromCache(b, account.key);

    await proxyT.cut();
    const refused = await revokeOn(t, account.keyId);
    assert.equal(refused.status, 503);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.deepEqual(Object.keys(body), ['error']);
    assert.equal(body.error.code, 'admin.unavailable');
    assert.match(body.error.message, /saved.*up to 30 s.*retry/);
    const [row] = await t.db.query<{ status: string; revoked_at: Date }>(`SELECT status, revoked_at FROM api_key WHERE id = $1`, [account.keyId]);
    assert.equal(row?.status, 'revoked', 'the revocation is committed');
    // The documented limit: B cached the key and heard nothing, so it may serve it until the TTL.
    assert.equal((await b.request(WALLET, { key: account.key })).status, 200);

    await proxyT.restore();
    // The operator retries until Redis takes it (idempotent: the first revocation time is kept).
    const retried = await eventually(
      async () => {
        const response = await revokeOn(t, account.keyId);
        return { status: response.status, body: (await response.json()) as { status?: string; revokedAt?: string } };
      },
      (r) => r.status === 200,
      'the revoke retried once Redis is back',
      30_000,
    );
    assert.equal(retried.body.status, 'revoked');
    assert.equal(new Date(retried.body.revokedAt!).getTime(), row.revoked_at.getTime());
    await expectRevoked(await b.request(WALLET, { key: account.key }));
  });
});
