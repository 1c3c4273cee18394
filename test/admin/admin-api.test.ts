import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { IdentityService } from '../../src/modules/identity/identity.service.js';
import { createAccount } from '../support/factories.js';
import { TEST_ADMIN_TOKEN, bootTestApp, type TestApp } from '../support/test-app.js';

interface ErrorBody {
  error: { code: string; message: string };
}
interface PageBody<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}
interface WalletBody {
  balanceUsd: number;
  heldUsd: number;
  availableUsd: number;
}
interface WorkspaceBody {
  id: string;
  name: string;
  createdAt: string;
  wallet: WalletBody;
  testWallet: WalletBody;
}
interface KeyBody {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  environment: string;
  status: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  key?: string;
}
interface LedgerBody {
  id: string;
  kind: string;
  amountUsd: number;
  holdId: string | null;
  subjectType: string | null;
  subjectId: string | null;
  reference: string | null;
  environment: string;
  createdAt: string;
}

const ZERO: WalletBody = { balanceUsd: 0, heldUsd: 0, availableUsd: 0 };

describe('admin API', () => {
  let t: TestApp;

  /** t.request, with POST as the method whenever a JSON body is given. */
  const req = (path: string, init: Parameters<TestApp['request']>[1] = {}) =>
    t.request(path, { ...(init.json !== undefined ? { method: 'POST' } : {}), ...init });

  /** An admin call that must succeed; returns the parsed body. */
  async function admin<T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> {
    const response = await req(path, { admin: true, method: init.method ?? (init.json === undefined ? 'GET' : 'POST'), json: init.json });
    const body = await response.json();
    assert.equal(response.status, 200, `${path}: ${JSON.stringify(body)}`);
    return body as T;
  }

  async function expectError(response: Response, status: number, code: string, messageIncludes?: string): Promise<void> {
    const body = (await response.json()) as ErrorBody;
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    if (messageIncludes) assert.ok(body.error.message.includes(messageIncludes), `"${body.error.message}" should mention ${messageIncludes}`);
  }

  const createWorkspace = (name: string) => admin<{ id: string; name: string; createdAt: string }>('/admin/v1/workspaces', { json: { name } });

  /** Follows nextCursor to the end; returns every item in order. */
  async function allPages<T>(path: string, limit: number): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const page: PageBody<T> = await admin<PageBody<T>>(`${path}${separator}limit=${limit}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      pages++;
      assert.ok(page.items.length <= limit);
      assert.equal(page.hasMore, page.nextCursor !== null);
      if (page.hasMore) assert.equal(page.items.length, limit);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null && pages < 100);
    return { items, pages };
  }

  before(async () => {
    t = await bootTestApp({ label: 'admin' });
  });
  after(async () => {
    await t.close();
  });

  it('runs an operator flow end to end: workspace → key → credit → spend view → ledger → revoke', async () => {
    const workspace = await createWorkspace('Acme');
    assert.deepEqual(Object.keys(workspace).sort(), ['createdAt', 'id', 'name']);
    assert.equal(workspace.name, 'Acme');

    const detail = await admin<WorkspaceBody>(`/admin/v1/workspaces/${workspace.id}`);
    assert.deepEqual(detail, { ...workspace, wallet: ZERO, testWallet: ZERO });

    const issued = await admin<KeyBody>(`/admin/v1/workspaces/${workspace.id}/api-keys`, { json: { name: 'backend' } });
    assert.match(issued.key!, /^svc_live_[0-9A-Za-z]{38}$/);
    assert.equal(issued.prefix, issued.key!.slice(0, issued.prefix.length));
    assert.equal(issued.environment, 'live');
    assert.equal(issued.status, 'active');
    assert.equal(issued.workspaceId, workspace.id);
    assert.equal(issued.revokedAt, null);

    const credited = await admin<WalletBody>(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, {
      json: { amountUsd: 12.345678, reference: 'topup-1' },
    });
    assert.deepEqual(credited, { balanceUsd: 12.345678, heldUsd: 0, availableUsd: 12.345678 });

    // The key sees the money through the public API.
    const seen = await req('/api/svc/v1/wallet', { key: issued.key });
    assert.equal(seen.status, 200);
    assert.deepEqual(await seen.json(), credited);

    assert.deepEqual(await admin(`/admin/v1/workspaces/${workspace.id}/wallet`), credited);
    assert.deepEqual((await admin<WorkspaceBody>(`/admin/v1/workspaces/${workspace.id}`)).wallet, credited);

    const ledger = await admin<PageBody<LedgerBody>>(`/admin/v1/workspaces/${workspace.id}/ledger`);
    assert.equal(ledger.items.length, 1);
    const [entry] = ledger.items;
    assert.equal(typeof entry!.id, 'string');
    assert.deepEqual(
      { ...entry, id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        kind: 'credit',
        amountUsd: 12.345678,
        holdId: null,
        subjectType: null,
        subjectId: null,
        reference: 'topup-1',
        environment: 'live',
      },
    );
    assert.equal(ledger.hasMore, false);
    assert.equal(ledger.nextCursor, null);
    // Inside: the ledger reproduces the wallet.
    const [sums] = await t.db.query<{ balance: string }>(
      `SELECT sum(balance_delta_micros)::text AS balance FROM ledger_entry WHERE workspace_id = $1 AND environment = 'live'`,
      [workspace.id],
    );
    assert.equal(sums!.balance, '12345678');

    const keys = await admin<PageBody<KeyBody>>(`/admin/v1/workspaces/${workspace.id}/api-keys`);
    assert.equal(keys.items.length, 1);
    assert.equal(keys.items[0]!.id, issued.id);
    assert.ok(!('key' in keys.items[0]!), 'listed keys carry no secret');
    assert.ok(!JSON.stringify(keys).includes(issued.key!));

    const revoked = await admin<KeyBody>(`/admin/v1/api-keys/${issued.id}/revoke`, { method: 'POST' });
    assert.equal(revoked.status, 'revoked');
    assert.ok(revoked.revokedAt);
    assert.ok(!('key' in revoked));

    // The very next request with the key is refused.
    const refused = await req('/api/svc/v1/wallet', { key: issued.key });
    await expectError(refused, 401, 'wallet.unauthorized');

    // Revoking again changes nothing (same revocation time).
    const again = await admin<KeyBody>(`/admin/v1/api-keys/${issued.id}/revoke`, { method: 'POST' });
    assert.deepEqual(again, revoked);
  });

  it('issues test keys that spend the separate test wallet', async () => {
    const workspace = await createWorkspace('Sandbox co');
    const issued = await admin<KeyBody>(`/admin/v1/workspaces/${workspace.id}/api-keys`, { json: { name: 'ci', environment: 'test' } });
    assert.match(issued.key!, /^svc_test_/);
    assert.equal(issued.environment, 'test');

    await admin(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { json: { amountUsd: 3, reference: 'test-money', environment: 'test' } });
    await admin(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { json: { amountUsd: 7, reference: 'live-money' } });

    const detail = await admin<WorkspaceBody>(`/admin/v1/workspaces/${workspace.id}`);
    assert.deepEqual(detail.wallet, { balanceUsd: 7, heldUsd: 0, availableUsd: 7 });
    assert.deepEqual(detail.testWallet, { balanceUsd: 3, heldUsd: 0, availableUsd: 3 });
    assert.deepEqual(await admin(`/admin/v1/workspaces/${workspace.id}/wallet?environment=test`), detail.testWallet);

    const seen = await req('/api/svc/v1/wallet', { key: issued.key });
    assert.deepEqual(await seen.json(), detail.testWallet);

    const testLedger = await admin<PageBody<LedgerBody>>(`/admin/v1/workspaces/${workspace.id}/ledger?environment=test`);
    assert.deepEqual(
      testLedger.items.map((e) => [e.environment, e.reference]),
      [['test', 'test-money']],
    );
    const bothLedgers = await admin<PageBody<LedgerBody>>(`/admin/v1/workspaces/${workspace.id}/ledger`);
    assert.deepEqual(
      bothLedgers.items.map((e) => e.reference),
      ['live-money', 'test-money'],
    );
  });

  describe('admin token', () => {
    it('refuses a missing, wrong or malformed token with 401 admin.unauthorized', async () => {
      await expectError(await req('/admin/v1/workspaces'), 401, 'admin.unauthorized');
      await expectError(
        await req('/admin/v1/workspaces', { headers: { authorization: 'Bearer not-the-admin-token-at-all' } }),
        401,
        'admin.unauthorized',
      );
      await expectError(await req('/admin/v1/workspaces', { headers: { authorization: 'Bearer ' } }), 401, 'admin.unauthorized');
      await expectError(await req('/admin/v1/workspaces', { headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }), 401, 'admin.unauthorized');
      await expectError(await req('/admin/v1/workspaces', { method: 'POST', json: { name: 'x' } }), 401, 'admin.unauthorized');
      // The scheme is case-insensitive, the token is not.
      assert.equal((await req('/admin/v1/workspaces', { headers: { authorization: `bearer ${TEST_ADMIN_TOKEN}` } })).status, 200);
      await expectError(await req('/admin/v1/workspaces', { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN.toUpperCase()}` } }), 401, 'admin.unauthorized');
    });

    it('does not take an API key as an admin token', async () => {
      const account = await createAccount(t, { creditUsd: 5 });
      await expectError(await req('/admin/v1/workspaces', { key: account.key }), 401, 'admin.unauthorized');
      await expectError(await req(`/admin/v1/workspaces/${account.workspaceId}/wallet`, { key: account.key }), 401, 'admin.unauthorized');
      await expectError(
        await req(`/admin/v1/workspaces/${account.workspaceId}/wallet/credits`, {
          method: 'POST',
          key: account.key,
          json: { amountUsd: 100, reference: 'self-service' },
        }),
        401,
        'admin.unauthorized',
      );
      // Nothing was credited.
      assert.deepEqual(await admin(`/admin/v1/workspaces/${account.workspaceId}/wallet`), { balanceUsd: 5, heldUsd: 0, availableUsd: 5 });
    });

    it('is not accepted on API-key routes', async () => {
      await expectError(await req('/api/svc/v1/wallet', { admin: true }), 401, 'wallet.unauthorized');
    });
  });

  describe('validation', () => {
    it('refuses unknown fields with 400 admin.unknown_field naming the field', async () => {
      const workspace = await createWorkspace('Validation');
      await expectError(await req('/admin/v1/workspaces', { admin: true, method: 'POST', json: { name: 'x', plan: 'gold' } }), 400, 'admin.unknown_field', 'plan');
      await expectError(
        await req(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, {
          admin: true,
          json: { amountUsd: 1, reference: 'r', currency: 'EUR' },
        }),
        400,
        'admin.unknown_field',
        'currency',
      );
      await expectError(await req(`/admin/v1/workspaces?limit=5&sort=asc`, { admin: true }), 400, 'admin.unknown_field', 'sort');
    });

    it('checks names, environments and references', async () => {
      const workspace = await createWorkspace('Validation 2');
      // NUL and unpaired surrogates: PostgreSQL cannot store them (a NUL was a 500, a lone surrogate stored as U+FFFD).
      for (const json of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(201) }, { name: 42 }, { name: 'a\u0000b' }, { name: 'a\ud800b' }]) {
        await expectError(await req('/admin/v1/workspaces', { admin: true, json }), 400, 'admin.invalid_field', 'name');
      }
      await expectError(await req(`/admin/v1/workspaces/${workspace.id}/api-keys`, { admin: true, method: 'POST', json: { name: 'k\u0000' } }), 400, 'admin.invalid_field', 'name');
      await expectError(
        await req(`/admin/v1/workspaces/${workspace.id}/api-keys`, { admin: true, method: 'POST', json: { name: 'k', environment: 'prod' } }),
        400,
        'admin.invalid_field',
        'environment',
      );
      // Whitespace at either end would make `same` and `same ` two references: two credits.
      for (const reference of [undefined, '', 'r'.repeat(201), 7, '   ', 'same ', ' same', 'a\u0000b']) {
        await expectError(
          await req(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { admin: true, method: 'POST', json: { amountUsd: 1, reference } }),
          400,
          'admin.invalid_field',
          'reference',
        );
      }
      await expectError(await req('/admin/v1/workspaces', { admin: true, method: 'POST', body: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'request.invalid_json');
      await expectError(await req('/admin/v1/workspaces', { admin: true, method: 'POST', json: ['x'] }), 400, 'admin.invalid_field');
    });

    it('refuses bad amounts with 400 naming amountUsd, and credits nothing', async () => {
      const workspace = await createWorkspace('Amounts');
      const bad: unknown[] = [0, -1, -0.5, 1.1234567, 1e-7, 0.1 + 0.2, 1_000_000.000001, 2_000_000, '10', null, true, [5], { usd: 5 }];
      for (const amountUsd of bad) {
        await expectError(
          await req(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { admin: true, method: 'POST', json: { amountUsd, reference: `bad-${String(amountUsd)}` } }),
          400,
          'admin.invalid_field',
          'amountUsd',
        );
      }
      await expectError(
        await req(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { admin: true, method: 'POST', json: { reference: 'missing' } }),
        400,
        'admin.invalid_field',
        'amountUsd',
      );
      assert.deepEqual(await admin(`/admin/v1/workspaces/${workspace.id}/wallet`), ZERO);
      // The edges that are allowed.
      await admin(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { json: { amountUsd: 0.000001, reference: 'one-micro' } });
      const top = await admin<WalletBody>(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { json: { amountUsd: 1_000_000, reference: 'max' } });
      assert.equal(top.balanceUsd, 1_000_000.000001);
    });

    it('checks limit and cursor', async () => {
      for (const limit of ['0', '101', 'abc', '1.5', '-3']) {
        await expectError(await req(`/admin/v1/workspaces?limit=${limit}`, { admin: true }), 400, 'admin.invalid_field', 'limit');
      }
      const garbage = Buffer.from('not a cursor').toString('base64url');
      const foreign = Buffer.from(`${new Date().toISOString()}|'; DROP TABLE workspace; --`).toString('base64url');
      for (const cursor of ['%%%', garbage, foreign]) {
        await expectError(await req(`/admin/v1/workspaces?after=${cursor}`, { admin: true }), 400, 'admin.invalid_field', 'after');
      }
      const workspace = await createWorkspace('Cursor');
      await expectError(await req(`/admin/v1/workspaces/${workspace.id}/ledger?after=${foreign}`, { admin: true }), 400, 'admin.invalid_field', 'after');
      await expectError(await req(`/admin/v1/workspaces/${workspace.id}/api-keys?after=${garbage}`, { admin: true }), 400, 'admin.invalid_field', 'after');
    });
  });

  it('a NUL in a query parameter is 400 admin.invalid_field naming it, and in a task id 404 (both were a 500 at PostgreSQL)', async () => {
    const workspace = await createWorkspace('Nul');
    for (const [path, name] of [
      ['/admin/v1/workspaces?q=%00', 'q'],
      [`/admin/v1/workspaces/${workspace.id}/ledger?subjectId=%00`, 'subjectId'],
      [`/admin/v1/workspaces/${workspace.id}/ledger?subjectType=a%00`, 'subjectType'],
      ['/admin/v1/tasks?status=%00', 'status'],
    ] as const) {
      await expectError(await req(path, { admin: true }), 400, 'admin.invalid_field', name);
    }
    await expectError(await req('/admin/v1/tasks/omni:%00', { admin: true }), 404, 'admin.not_found');
  });

  describe('credit idempotency', () => {
    it('treats a repeated reference with the same amount as a no-op', async () => {
      const workspace = await createWorkspace('Idempotent');
      const path = `/admin/v1/workspaces/${workspace.id}/wallet/credits`;
      const first = await admin<WalletBody>(path, { json: { amountUsd: 10, reference: 'invoice-1' } });
      const repeat = await admin<WalletBody>(path, { json: { amountUsd: 10, reference: 'invoice-1' } });
      assert.deepEqual(first, { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
      assert.deepEqual(repeat, first);
      // Concurrent repeats are applied once too.
      const burst = await Promise.all(Array.from({ length: 5 }, () => req(path, { admin: true, method: 'POST', json: { amountUsd: 2.5, reference: 'invoice-2' } })));
      assert.deepEqual(
        burst.map((r) => r.status),
        [200, 200, 200, 200, 200],
      );
      assert.deepEqual(await admin(`/admin/v1/workspaces/${workspace.id}/wallet`), { balanceUsd: 12.5, heldUsd: 0, availableUsd: 12.5 });
      const ledger = await admin<PageBody<LedgerBody>>(`/admin/v1/workspaces/${workspace.id}/ledger`);
      assert.deepEqual(
        ledger.items.map((e) => [e.reference, e.amountUsd]),
        [
          ['invoice-2', 2.5],
          ['invoice-1', 10],
        ],
      );
    });

    it('answers 409 admin.conflict when a reference is reused with another amount', async () => {
      const workspace = await createWorkspace('Conflict');
      const path = `/admin/v1/workspaces/${workspace.id}/wallet/credits`;
      await admin(path, { json: { amountUsd: 10, reference: 'invoice-9' } });
      await expectError(await req(path, { admin: true, method: 'POST', json: { amountUsd: 11, reference: 'invoice-9' } }), 409, 'admin.conflict', 'invoice-9');
      assert.deepEqual(await admin(`/admin/v1/workspaces/${workspace.id}/wallet`), { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
      // The same reference on the other wallet is another credit.
      const test = await admin<WalletBody>(path, { json: { amountUsd: 11, reference: 'invoice-9', environment: 'test' } });
      assert.equal(test.balanceUsd, 11);
    });
  });

  describe('paging', () => {
    it('pages workspaces newest first without gaps or duplicates', async () => {
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await createWorkspace(`Paged ${i}`)).id);
      // Created together, so several share a millisecond: the cursor (a JS Date, millisecond
      // precision, over microsecond timestamps) must still skip and repeat nothing.
      const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => t.app.get(IdentityService).createWorkspace(`Burst ${i}`)));
      const { items, pages } = await allPages<WorkspaceBody>('/admin/v1/workspaces', 4);
      const ids = items.map((w) => w.id);
      assert.equal(new Set(ids).size, ids.length, 'no duplicates across pages');
      assert.ok(pages >= 4);
      const [count] = await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM workspace');
      assert.equal(ids.length, Number(count!.n), 'every workspace is listed once');
      for (const workspace of burst) assert.ok(ids.includes(workspace.id), `burst workspace ${workspace.id} listed`);
      // Those created one after the other appear newest first.
      assert.deepEqual(
        ids.filter((id) => created.includes(id)),
        [...created].reverse(),
      );
      for (let i = 1; i < items.length; i++) assert.ok(items[i - 1]!.createdAt >= items[i]!.createdAt);
      // Every listed workspace carries both wallets.
      for (const item of items) {
        assert.equal(typeof item.wallet.balanceUsd, 'number');
        assert.equal(typeof item.testWallet.availableUsd, 'number');
      }
      const first = await admin<PageBody<WorkspaceBody>>('/admin/v1/workspaces');
      assert.equal(first.items.length, Math.min(20, ids.length), 'default limit is 20');
    });

    it('pages the ledger by entry id', async () => {
      const workspace = await createWorkspace('Ledger pages');
      for (let i = 1; i <= 7; i++) {
        await admin(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { json: { amountUsd: i, reference: `ref-${i}` } });
      }
      const { items, pages } = await allPages<LedgerBody>(`/admin/v1/workspaces/${workspace.id}/ledger`, 3);
      assert.equal(pages, 3);
      assert.deepEqual(
        items.map((e) => e.reference),
        ['ref-7', 'ref-6', 'ref-5', 'ref-4', 'ref-3', 'ref-2', 'ref-1'],
      );
      const ids = items.map((e) => BigInt(e.id));
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! > ids[i]!, 'strictly decreasing ids');
      // Exactly `limit` items on the last full page: no phantom next page.
      const exact = await admin<PageBody<LedgerBody>>(`/admin/v1/workspaces/${workspace.id}/ledger?limit=7`);
      assert.equal(exact.items.length, 7);
      assert.equal(exact.hasMore, false);
      assert.equal(exact.nextCursor, null);
    });

    it("pages a workspace's keys", async () => {
      const workspace = await createWorkspace('Key pages');
      const issued: string[] = [];
      for (let i = 0; i < 5; i++) {
        issued.push((await admin<KeyBody>(`/admin/v1/workspaces/${workspace.id}/api-keys`, { json: { name: `k${i}` } })).id);
      }
      const { items } = await allPages<KeyBody>(`/admin/v1/workspaces/${workspace.id}/api-keys`, 2);
      assert.deepEqual(
        items.map((k) => k.id),
        [...issued].reverse(),
      );
    });
  });

  describe('unknown ids', () => {
    it('answers 404 admin.not_found for unknown and malformed workspace ids', async () => {
      for (const id of [randomUUID(), 'abc', 'not-a-uuid', '00000000-0000-0000-0000-000000000000', `${randomUUID()}x`, "1' OR '1'='1"]) {
        const base = `/admin/v1/workspaces/${encodeURIComponent(id)}`;
        await expectError(await req(base, { admin: true }), 404, 'admin.not_found');
        await expectError(await req(`${base}/wallet`, { admin: true }), 404, 'admin.not_found');
        await expectError(await req(`${base}/ledger`, { admin: true }), 404, 'admin.not_found');
        await expectError(await req(`${base}/api-keys`, { admin: true }), 404, 'admin.not_found');
        await expectError(await req(`${base}/api-keys`, { admin: true, method: 'POST', json: { name: 'k' } }), 404, 'admin.not_found');
        await expectError(
          await req(`${base}/wallet/credits`, { admin: true, method: 'POST', json: { amountUsd: 1, reference: 'r' } }),
          404,
          'admin.not_found',
        );
      }
    });

    it('answers 404 admin.not_found for unknown and malformed key ids', async () => {
      for (const id of [randomUUID(), 'abc', 'svc_live_whatever']) {
        await expectError(await req(`/admin/v1/api-keys/${id}/revoke`, { admin: true, method: 'POST' }), 404, 'admin.not_found');
      }
    });

    it('accepts an upper-case UUID for an existing workspace', async () => {
      const workspace = await createWorkspace('Upper');
      const found = await admin<WorkspaceBody>(`/admin/v1/workspaces/${workspace.id.toUpperCase()}`);
      assert.equal(found.id, workspace.id);
    });
  });

  describe('tasks', () => {
    it('lists nothing while no domain registers a task source', async () => {
      assert.deepEqual(await admin('/admin/v1/tasks'), { items: [], hasMore: false, nextCursor: null });
      assert.deepEqual(await admin(`/admin/v1/tasks?status=queued&workspaceId=${randomUUID()}&limit=5`), { items: [], hasMore: false, nextCursor: null });
    });

    it('refuses an unknown kind and a malformed workspaceId', async () => {
      await expectError(await req('/admin/v1/tasks?kind=pottery', { admin: true }), 400, 'admin.invalid_field', 'kind');
      await expectError(await req('/admin/v1/tasks?workspaceId=nope', { admin: true }), 400, 'admin.invalid_field', 'workspaceId');
    });
  });

  it('documents every admin route in OpenAPI', async () => {
    const response = await req('/docs/json');
    assert.equal(response.status, 200);
    const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    for (const [path, method] of [
      ['/admin/v1/workspaces', 'post'],
      ['/admin/v1/workspaces', 'get'],
      ['/admin/v1/workspaces/{id}', 'get'],
      ['/admin/v1/workspaces/{id}/api-keys', 'post'],
      ['/admin/v1/workspaces/{id}/api-keys', 'get'],
      ['/admin/v1/api-keys/{keyId}/revoke', 'post'],
      ['/admin/v1/workspaces/{id}/wallet/credits', 'post'],
      ['/admin/v1/workspaces/{id}/wallet', 'get'],
      ['/admin/v1/workspaces/{id}/ledger', 'get'],
      ['/admin/v1/tasks', 'get'],
    ] as const) {
      const operation = document.paths[path]?.[method] as { responses?: Record<string, unknown> } | undefined;
      assert.ok(operation, `${method} ${path} documented`);
      assert.ok(operation.responses?.['200'], `${method} ${path} documents its 200`);
    }
  });
});
