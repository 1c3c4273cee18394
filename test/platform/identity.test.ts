import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { checksumOf, generateApiKey } from '../../src/modules/identity/api-key-format.js';
import { ApiKeyGuard } from '../../src/modules/identity/api-key.guard.js';
import { IdentityService } from '../../src/modules/identity/identity.service.js';
import { eventually } from '../support/eventually.js';
import { createAccount, issueKey } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { SAMPLE_OWNED_TABLE_SQL, SampleOwnedModule } from './sample-owned.module.js';

interface ErrorBody {
  error: { code: string; message: string };
}

async function lookups(t: TestApp): Promise<number> {
  const text = await (await t.request('/metrics')).text();
  const match = /^svc_api_key_lookups_total (\d+)$/m.exec(text);
  assert.ok(match, 'svc_api_key_lookups_total is exported');
  return Number(match[1]);
}

/** Replaces the character at `position` with another base62 character. */
function mutate(key: string, position: number): string {
  const replacement = key[position] === 'x' ? 'y' : 'x';
  return key.slice(0, position) + replacement + key.slice(position + 1);
}

describe('identity: API keys, modes and ownership', () => {
  let t: TestApp;

  before(async () => {
    t = await bootTestApp({ label: 'identity', imports: [SampleOwnedModule] });
    await t.db.query(SAMPLE_OWNED_TABLE_SQL);
  });
  after(async () => {
    await t.close();
  });

  async function expect401(authorization: string | undefined, message: RegExp): Promise<void> {
    const response = await t.request('/api/svc/v1/wallet', { headers: authorization === undefined ? {} : { authorization } });
    assert.equal(response.status, 401, `${authorization}`);
    const body = (await response.json()) as ErrorBody;
    assert.deepEqual(Object.keys(body), ['error']);
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
    assert.equal(body.error.code, 'wallet.unauthorized');
    assert.match(body.error.message, message);
  }

  it('refuses missing, malformed, wrong-prefix and bad-checksum keys without a database lookup', async () => {
    const { key } = await createAccount(t, { creditUsd: 1 });
    const before = await lookups(t);

    await expect401(undefined, /missing Authorization header/);
    await expect401(`Basic ${Buffer.from('user:pass').toString('base64')}`, /Bearer/);
    await expect401('Bearer', /Bearer/);
    await expect401('Bearer not-a-key', /^malformed API key$/);
    await expect401(`Bearer ${key.slice(0, -1)}`, /^malformed API key$/);
    await expect401(`Bearer ${key}x`, /^malformed API key$/);
    // Wrong prefix, even with a checksum computed over it.
    const random = key.slice(9, 41);
    await expect401(`Bearer svc_prod_${random}${checksumOf(`svc_prod_${random}`)}`, /^malformed API key$/);
    await expect401(`Bearer sk_live_${random}${checksumOf(`sk_live_${random}`)}`, /^malformed API key$/);
    await expect401(`Bearer ${key.replace('svc_live_', 'svc_test_')}`, /checksum mismatch/);
    // One character off anywhere in the random part or the checksum.
    for (const position of [9, 20, 40, 41, 46]) await expect401(`Bearer ${mutate(key, position)}`, /checksum mismatch/);

    assert.equal(await lookups(t), before, 'no key lookup for a key that fails the format');
    // The real key still works, and that is one lookup: the counter does count.
    assert.equal((await t.request('/api/svc/v1/wallet', { key })).status, 200);
    assert.equal(await lookups(t), before + 1);
  });

  it('refuses an unknown well-formed key after exactly one lookup', async () => {
    const before = await lookups(t);
    await expect401(`Bearer ${generateApiKey('live').key}`, /^unknown API key$/);
    assert.equal(await lookups(t), before + 1);
  });

  it('refuses a revoked key on the very next request, on every instance', async () => {
    const account = await createAccount(t, { creditUsd: 2 });
    const other = await bootTestApp({ label: 'identity2', db: t.db });
    try {
      for (const app of [t, other]) assert.equal((await app.request('/api/svc/v1/wallet', { key: account.key })).status, 200);

      const revoked = await t.app.get(IdentityService).revokeApiKey(account.keyId);
      assert.equal(revoked.status, 'revoked');
      assert.ok(revoked.revokedAt instanceof Date);

      for (const app of [t, other]) {
        const response = await app.request('/api/svc/v1/wallet', { key: account.key });
        assert.equal(response.status, 401);
        assert.deepEqual(await response.json(), { error: { code: 'wallet.unauthorized', message: 'API key has been revoked' } });
      }
      const [row] = await t.db.query<{ status: string; revoked: boolean }>(
        `SELECT status, revoked_at IS NOT NULL AS revoked FROM api_key WHERE id = $1`,
        [account.keyId],
      );
      assert.deepEqual(row, { status: 'revoked', revoked: true });
      // Another key of the same workspace is unaffected.
      const sibling = await issueKey(t, account.workspaceId);
      assert.equal((await other.request('/api/svc/v1/wallet', { key: sibling.key })).status, 200);
    } finally {
      await other.close();
    }
  });

  it('concurrent lookups share queries (group commit) and each request still gets its own key, revoked and unknown included', async () => {
    const live = await createAccount(t, { creditUsd: 1 });
    const sibling = await issueKey(t, live.workspaceId);
    const revoked = await issueKey(t, live.workspaceId);
    await t.app.get(IdentityService).revokeApiKey(revoked.keyId);
    const unknown = generateApiKey('live').key;
    const guard = t.app.get(ApiKeyGuard);
    const before = guard.lookupCounters();

    const keys = Array.from({ length: 120 }, (_, i) => [live.key, sibling.key, revoked.key, unknown][i % 4]!);
    const outcomes = await Promise.all(
      keys.map((key) =>
        guard.authenticate(`Bearer ${key}`).then(
          (k) => k.id,
          (error: { status?: number; message?: string }) => `${error.status} ${error.message}`,
        ),
      ),
    );
    const expected = [live.keyId, sibling.keyId, '401 API key has been revoked', '401 unknown API key'];
    assert.deepEqual(outcomes, keys.map((_, i) => expected[i % 4]));

    const after = guard.lookupCounters();
    assert.equal(after.items - before.items, 120);
    assert.ok(after.calls - before.calls < 120, `120 lookups in ${after.calls - before.calls} queries: batches formed`);
    assert.ok(after.largest > 1);
  });

  it('writes last_used_at off the request path, for many keys at once (batched touches)', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const keys = [{ keyId: account.keyId, key: account.key }];
    for (let i = 0; i < 20; i++) keys.push(await issueKey(t, account.workspaceId));
    const startedAt = Date.now();
    const statuses = await Promise.all(keys.map(async ({ key }) => (await t.request('/api/svc/v1/wallet', { key })).status));
    assert.deepEqual(new Set(statuses), new Set([200]));
    const rows = await eventually(
      () => t.db.query<{ id: string; last_used_at: Date | null }>(`SELECT id, last_used_at FROM api_key WHERE workspace_id = $1`, [account.workspaceId]),
      (read) => read.length === keys.length && read.every((row) => row.last_used_at !== null),
      'every key touched',
      30_000,
    );
    for (const row of rows) assert.ok(row.last_used_at!.getTime() >= startedAt - 1000, `${row.id} touched by this request`);
  });

  it('gives a test-mode key (svc_test_) its own wallet, separate from the live one', async () => {
    const testAccount = await createAccount(t, { environment: 'test', creditUsd: 3 });
    assert.match(testAccount.key, /^svc_test_/);
    const live = await issueKey(t, testAccount.workspaceId, 'live');
    assert.match(live.key, /^svc_live_/);

    const wallet = async (key: string) => (await t.request('/api/svc/v1/wallet', { key })).json();
    assert.deepEqual(await wallet(testAccount.key), { balanceUsd: 3, heldUsd: 0, availableUsd: 3 });
    assert.deepEqual(await wallet(live.key), { balanceUsd: 0, heldUsd: 0, availableUsd: 0 });

    await t.app.get(WalletService).credit(testAccount.workspaceId, 'live', 7_000_000n, `live-${randomUUID()}`);
    // A test-mode purchase draws on test money only.
    const created = await t.request('/api/svc/v1/test-owned', { method: 'POST', key: testAccount.key, json: { label: 'sandbox', costMicros: 500_000 } });
    assert.equal(created.status, 200);
    assert.deepEqual(await wallet(testAccount.key), { balanceUsd: 3, heldUsd: 0.5, availableUsd: 2.5 });
    assert.deepEqual(await wallet(live.key), { balanceUsd: 7, heldUsd: 0, availableUsd: 7 });
    const holds = await t.db.query<{ environment: string }>(`SELECT environment FROM hold WHERE workspace_id = $1`, [testAccount.workspaceId]);
    assert.deepEqual(holds, [{ environment: 'test' }]);
  });

  it("answers another key's resource exactly like a missing one (404), even within the workspace", async () => {
    const owner = await createAccount(t, { creditUsd: 1 });
    const sameWorkspace = await issueKey(t, owner.workspaceId);
    const otherWorkspace = await createAccount(t, { creditUsd: 1 });

    const created = await t.request('/api/svc/v1/test-owned', { method: 'POST', key: owner.key, json: { label: 'mine', costMicros: 1_000 } });
    assert.equal(created.status, 200);
    const resource = (await created.json()) as { id: string; label: string; holdId: string };
    assert.equal(resource.label, 'mine');

    const read = async (key: string, id: string) => {
      const response = await t.request(`/api/svc/v1/test-owned/${id}`, { key });
      return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
    };
    const mine = await read(owner.key, resource.id);
    assert.equal(mine.status, 200);
    assert.deepEqual(JSON.parse(mine.body), resource);

    const missing = await read(owner.key, randomUUID());
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.body), { error: { code: 'request.not_found', message: 'test resource not found' } });
    for (const [who, key, id] of [
      ['same workspace, other key', sameWorkspace.key, resource.id],
      ['other workspace', otherWorkspace.key, resource.id],
      ['malformed id', owner.key, 'not-a-uuid'],
    ] as const) {
      assert.deepEqual(await read(key, id), missing, who);
    }
    // The row is there all along: the 404 is the ownership rule, not a missing row.
    const [row] = await t.db.query<{ api_key_id: string }>(`SELECT api_key_id FROM test_owned WHERE id = $1`, [resource.id]);
    assert.equal(row?.api_key_id, owner.keyId);
  });
});
