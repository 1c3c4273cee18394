import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { usdToMicros } from '../../libs/common/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { QUEUE_DASHBOARD_COOKIE_TTL_MS, QueueDashboardCookie } from '../../src/queue/queue-dashboard-cookie.js';
import { RegisteredQueues } from '../../src/queue/registered-queues.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { TEST_ADMIN_TOKEN, bootTestApp, type TestApp } from '../support/test-app.js';
import { jobState, Receiver, terminalTask, waitForDelivery } from '../webhooks/deliveries-helpers.js';
import { createEndpoint, SUCCEEDED } from '../webhooks/endpoints-helpers.js';

interface ErrorBody {
  error: { code: string; message: string };
}
interface PageBody<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/**
 * What the admin API gained for the console (docs/admin-api.md): workspace search, ledger filters,
 * task detail, overview, an operator's retry of a webhook delivery, and the queue dashboard
 * behind the admin token or its cookie. A real speech task (sandbox) with a webhook endpoint
 * that refuses gives a real hold, ledger entries and a failed delivery.
 */
describe('admin API for the console', () => {
  let t: TestApp;
  let account: TestAccount;
  let receiver: Receiver;
  let task: { id: string; status: string };
  let deliveryId: string;

  const get = (path: string, admin = true) => t.request(path, { admin });
  const post = (path: string, json?: unknown) => t.request(path, { method: 'POST', admin: true, ...(json === undefined ? {} : { json }) });
  async function ok<T>(answer: Response | Promise<Response>, status = 200): Promise<T> {
    const response = await answer;
    const body = await response.json();
    assert.equal(response.status, status, JSON.stringify(body));
    return body as T;
  }
  async function refused(answer: Response | Promise<Response>, status: number, code: string): Promise<string> {
    const response = await answer;
    const body = (await response.json()) as ErrorBody;
    assert.equal(response.status, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    return body.error.message;
  }

  before(async () => {
    t = await bootTestApp({ label: 'adminconsole' });
    account = await createAccount(t, { creditUsd: 5, environment: 'test', name: 'Console Probe 100%_done' });
    receiver = await Receiver.start();
    receiver.answer = () => ({ status: 404 });
    const endpoint = await createEndpoint(t, account, { url: receiver.url('/gone'), events: [SUCCEEDED] });
    task = await terminalTask(t, account, endpoint.id);
    assert.equal(task.status, 'succeeded');
    const delivery = await waitForDelivery(t, task.id, (row) => row.status === 'failed', 'the delivery failed (404)');
    await eventually(() => jobState(t, delivery.id), (state) => state === 'completed', 'its job ended');
    deliveryId = delivery.id;
  });
  after(async () => {
    await t?.close();
    await receiver?.close();
  });

  describe('GET /admin/v1/workspaces?q=', () => {
    it('finds by a part of the name (case-insensitive, % and _ literal) and by the whole id; nothing else', async () => {
      const other = await createAccount(t, { name: 'Unrelated' });
      const byName = await ok<PageBody<{ id: string }>>(get('/admin/v1/workspaces?q=probe%20100%25_'));
      assert.deepEqual(byName.items.map((w) => w.id), [account.workspaceId]);
      // `%` alone is a literal percent sign, not "anything".
      const percent = await ok<PageBody<{ id: string }>>(get('/admin/v1/workspaces?q=%25'));
      assert.deepEqual(percent.items.map((w) => w.id), [account.workspaceId]);
      const byId = await ok<PageBody<{ id: string; wallet: unknown }>>(get(`/admin/v1/workspaces?q=${other.workspaceId.toUpperCase()}`));
      assert.deepEqual(byId.items.map((w) => w.id), [other.workspaceId]);
      assert.ok(byId.items[0]!.wallet, 'search results carry wallet figures like the plain list');
      const none = await ok<PageBody<unknown>>(get('/admin/v1/workspaces?q=no-such-workspace'));
      assert.deepEqual(none, { items: [], hasMore: false, nextCursor: null });
    });

    it('pages a search with the cursor', async () => {
      const tag = `paged-${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 3; i += 1) await createAccount(t, { name: `${tag} ${i}` });
      const first = await ok<PageBody<{ name: string }>>(get(`/admin/v1/workspaces?q=${tag}&limit=2`));
      assert.equal(first.items.length, 2);
      assert.equal(first.hasMore, true);
      const second = await ok<PageBody<{ name: string }>>(get(`/admin/v1/workspaces?q=${tag}&limit=2&after=${encodeURIComponent(first.nextCursor!)}`));
      assert.deepEqual(second.items.map((w) => w.name), [`${tag} 0`]);
      assert.equal(second.hasMore, false);
    });

    it('refuses an empty or over-long search', async () => {
      await refused(get('/admin/v1/workspaces?q='), 400, 'admin.invalid_field');
      await refused(get(`/admin/v1/workspaces?q=${'x'.repeat(201)}`), 400, 'admin.invalid_field');
    });
  });

  describe('GET /admin/v1/workspaces/{id}/ledger filters', () => {
    const ledger = (query: string) => ok<PageBody<{ kind: string; subjectId: string | null; subjectType: string | null; environment: string }>>(get(`/admin/v1/workspaces/${account.workspaceId}/ledger?${query}`));

    it('by kind, by subject id and by subject type, together or alone', async () => {
      const all = await ledger('');
      assert.deepEqual(new Set(all.items.map((e) => e.kind)), new Set(['credit', 'hold', 'capture']), JSON.stringify(all.items));
      const credits = await ledger('kind=credit');
      assert.deepEqual(credits.items.map((e) => e.kind), ['credit']);
      const ofTask = await ledger(`subjectId=${encodeURIComponent(task.id)}`);
      assert.ok(ofTask.items.length >= 2);
      assert.ok(ofTask.items.every((e) => e.subjectId === task.id));
      const captureOfTask = await ledger(`subjectId=${encodeURIComponent(task.id)}&kind=capture`);
      assert.deepEqual(captureOfTask.items.map((e) => e.kind), ['capture']);
      const byType = await ledger(`subjectType=${ofTask.items[0]!.subjectType}`);
      assert.equal(byType.items.length, ofTask.items.length);
      assert.deepEqual((await ledger('subjectId=audio:none')).items, []);
      assert.deepEqual((await ledger('kind=hold&environment=live')).items, []);
    });

    it('refuses an unknown kind', async () => {
      const message = await refused(get(`/admin/v1/workspaces/${account.workspaceId}/ledger?kind=refund`), 400, 'admin.invalid_field');
      assert.match(message, /kind/);
    });
  });

  describe('GET /admin/v1/tasks/{id}', () => {
    it("a real task: its summary, phase, usage, hold and ledger entries", async () => {
      const detail = await ok<{
        id: string;
        kind: string;
        status: string;
        phase: string | null;
        failureReason: string | null;
        chargedUsd: number | null;
        usage: { heldUsd: number; chargedUsd: number; measuredUsd: number };
        holds: Array<{ status: string; amountUsd: number; capturedUsd: number; environment: string }>;
        ledger: Array<{ kind: string; subjectId: string }>;
      }>(get(`/admin/v1/tasks/${encodeURIComponent(task.id)}`));
      assert.equal(detail.id, task.id);
      assert.equal(detail.kind, 'audio');
      assert.equal(detail.status, 'succeeded');
      assert.equal(detail.failureReason, null);
      assert.equal(detail.holds.length, 1);
      const [hold] = detail.holds;
      assert.equal(hold!.status, 'settled');
      assert.equal(hold!.environment, 'test');
      assert.ok(hold!.capturedUsd > 0 && hold!.capturedUsd <= hold!.amountUsd, JSON.stringify(hold));
      assert.equal(detail.usage.chargedUsd, hold!.capturedUsd);
      assert.equal(detail.usage.chargedUsd, detail.chargedUsd);
      assert.equal(detail.usage.heldUsd, 0);
      assert.ok(detail.usage.measuredUsd >= detail.usage.chargedUsd);
      assert.ok(detail.ledger.some((e) => e.kind === 'hold') && detail.ledger.some((e) => e.kind === 'capture'));
      assert.ok(detail.ledger.every((e) => e.subjectId === task.id));
      // The wallet agrees with the task's capture.
      const wallet = await ok<{ balanceUsd: number }>(get(`/admin/v1/workspaces/${account.workspaceId}/wallet?environment=test`));
      assert.equal(Math.round((5 - wallet.balanceUsd) * 1e6), Math.round(hold!.capturedUsd * 1e6));
    });

    it('an unknown id of any kind, or not an id at all, is 404', async () => {
      for (const id of [`omni:${randomUUID()}`, `audio:${randomUUID()}`, `image:${randomUUID()}`, 'nonsense', 'x'.repeat(90)]) {
        await refused(get(`/admin/v1/tasks/${encodeURIComponent(id)}`), 404, 'admin.not_found');
      }
    });
  });

  describe('GET /admin/v1/overview', () => {
    it('open holds and held USD, every registered queue, and the last hour of tasks by kind and status', async () => {
      const before = await ok<{ openHolds: number; heldUsd: number }>(get('/admin/v1/overview'));
      assert.equal(before.openHolds, 0);
      assert.equal(before.heldUsd, 0);
      const wallet = t.app.get(WalletService);
      const holdId = await wallet.hold({ workspaceId: account.workspaceId, environment: 'test', apiKeyId: account.keyId, amountMicros: usdToMicros(0.25), subjectType: 'probe', subjectId: 'probe:1' });
      try {
        const body = await ok<{
          openHolds: number;
          heldUsd: number;
          queues: Array<{ name: string; waiting: number; active: number; delayed: number; prioritized: number; failed: number }>;
          since: string;
          tasksLastHour: Array<{ kind: string; status: string; count: number }>;
          tasksCapped: boolean;
          taskKinds: string[];
        }>(get('/admin/v1/overview'));
        assert.deepEqual(body.taskKinds, ['alternate', 'audio', 'image', 'video']);
        assert.equal(body.openHolds, 1);
        assert.equal(body.heldUsd, 0.25);
        assert.deepEqual(body.queues.map((q) => q.name), t.app.get(RegisteredQueues).list().sort());
        for (const queue of body.queues) for (const count of [queue.waiting, queue.active, queue.delayed, queue.prioritized, queue.failed]) assert.ok(Number.isInteger(count) && count >= 0);
        assert.deepEqual(body.tasksLastHour, [{ kind: 'audio', status: 'succeeded', count: 1 }]);
        assert.equal(body.tasksCapped, false);
        assert.ok(Math.abs(Date.now() - 3_600_000 - Date.parse(body.since)) < 60_000);
      } finally {
        await wallet.release(holdId);
      }
      assert.equal((await ok<{ openHolds: number }>(get('/admin/v1/overview'))).openHolds, 0);
    });
  });

  describe('webhook deliveries: filter by endpoint, retry by an operator', () => {
    it('filters by endpoint and refuses a malformed endpoint id', async () => {
      const [row] = await t.db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_delivery WHERE id = $1', [deliveryId]);
      const mine = await ok<PageBody<{ id: string; endpointId: string; attempts: number }>>(get(`/admin/v1/webhook-deliveries?endpointId=${row!.endpoint_id}`));
      assert.deepEqual(mine.items.map((d) => d.id), [deliveryId]);
      assert.equal(mine.items[0]!.attempts, 1);
      const none = await ok<PageBody<unknown>>(get(`/admin/v1/webhook-deliveries?endpointId=webhook:${randomUUID()}`));
      assert.deepEqual(none.items, []);
      await refused(get('/admin/v1/webhook-deliveries?endpointId=nope'), 400, 'admin.invalid_field');
    });

    it('a failed delivery: 200 pending and a job; again while it is not failed: 409 and nothing changes; unknown: 404', async () => {
      await refused(post(`/admin/v1/webhook-deliveries/delivery:${randomUUID()}/retry`), 404, 'admin.not_found');
      await refused(post('/admin/v1/webhook-deliveries/nonsense/retry'), 404, 'admin.not_found');
      const retried = await ok<{ id: string; status: string; endpointId: string; apiKeyId: string }>(post(`/admin/v1/webhook-deliveries/${deliveryId}/retry`), 200);
      assert.equal(retried.id, deliveryId);
      assert.equal(retried.status, 'pending');
      assert.equal(retried.apiKeyId, account.keyId);
      // The new attempt runs (the receiver still answers 404) and the delivery ends failed again, with two attempts.
      await eventually(() => t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_delivery WHERE id = $1', [deliveryId]), (rows) => rows[0]?.status === 'failed' && rows[0].attempts === 2, 'the manual attempt ran');
      // Its attempts, newest first, paged by the attempt number.
      type Attempt = { attempt: number; manual: boolean; statusCode: number | null; error: string | null; durationMs: number; startedAt: string };
      const attempts = await ok<PageBody<Attempt>>(get(`/admin/v1/webhook-deliveries/${deliveryId}/attempts`));
      assert.deepEqual(attempts.items.map((a) => [a.attempt, a.manual, a.statusCode]), [[2, true, 404], [1, false, 404]]);
      assert.equal(attempts.hasMore, false);
      const first = await ok<PageBody<Attempt>>(get(`/admin/v1/webhook-deliveries/${deliveryId}/attempts?limit=1`));
      assert.deepEqual([first.items.map((a) => a.attempt), first.hasMore], [[2], true]);
      const second = await ok<PageBody<Attempt>>(get(`/admin/v1/webhook-deliveries/${deliveryId}/attempts?limit=1&after=${encodeURIComponent(first.nextCursor!)}`));
      assert.deepEqual([second.items.map((a) => a.attempt), second.hasMore, second.nextCursor], [[1], false, null]);
      await refused(get(`/admin/v1/webhook-deliveries/delivery:${randomUUID()}/attempts`), 404, 'admin.not_found');
      await refused(get(`/admin/v1/webhook-deliveries/${deliveryId}/attempts?after=${Buffer.from('2020-01-01T00:00:00.000Z|x').toString('base64url')}`), 400, 'admin.invalid_field');

      await t.db.query(`UPDATE webhook_delivery SET status = 'succeeded' WHERE id = $1`, [deliveryId]);
      const message = await refused(post(`/admin/v1/webhook-deliveries/${deliveryId}/retry`), 409, 'admin.conflict');
      assert.match(message, /only a failed delivery/);
      const [after] = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM webhook_delivery WHERE id = $1', [deliveryId]);
      assert.deepEqual(after, { status: 'succeeded', attempts: 2 });
    });
  });

  describe('queue dashboard at /admin/queues', () => {
    const registered = () => t.app.get(RegisteredQueues).list().sort();

    it('without the admin token: 401 on the page, its API and its static files', async () => {
      for (const path of ['/admin/queues', '/admin/queues/', '/admin/queues/api/queues', '/admin/queues/static/favicon-32x32.png']) {
        await refused(fetch(`${t.baseUrl}${path}`), 401, 'admin.unauthorized');
        await refused(fetch(`${t.baseUrl}${path}`, { headers: { authorization: 'Bearer wrong-token' } }), 401, 'admin.unauthorized');
        await refused(fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${account.key}` } }), 401, 'admin.unauthorized');
        await refused(fetch(`${t.baseUrl}${path}`, { headers: { cookie: 'svc_admin_queues=v1.9999999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } }), 401, 'admin.unauthorized');
      }
    });

    it('with the Bearer token: the page, and its API lists every registered queue', async () => {
      const page = await fetch(`${t.baseUrl}/admin/queues`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await page.text(), /svc-gateway queues/);
      const api = await ok<{ queues: Array<{ name: string }> }>(fetch(`${t.baseUrl}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } }));
      assert.deepEqual(api.queues.map((q) => q.name).sort(), registered());
      assert.ok(registered().includes('webhooks') && registered().includes('maintenance'));
    });

    it('with the cookie from POST /admin/v1/queue-dashboard/session (admin token only): HttpOnly, SameSite=Strict, scoped to the dashboard', async () => {
      await refused(t.request('/admin/v1/queue-dashboard/session', { method: 'POST' }), 401, 'admin.unauthorized');
      await refused(t.request('/admin/v1/queue-dashboard/session', { method: 'POST', key: account.key }), 401, 'admin.unauthorized');
      const answer = await post('/admin/v1/queue-dashboard/session');
      const body = (await answer.json()) as { path: string; expiresAt: string };
      assert.equal(answer.status, 200);
      assert.equal(body.path, '/admin/queues');
      const setCookie = answer.headers.get('set-cookie') ?? '';
      assert.match(setCookie, /^svc_admin_queues=v1\.\d+\.[A-Za-z0-9_-]{43}; /);
      for (const attribute of ['Path=/admin/queues', 'HttpOnly', 'SameSite=Strict', `Max-Age=${QUEUE_DASHBOARD_COOKIE_TTL_MS / 1000}`]) assert.ok(setCookie.includes(attribute), `${attribute} in ${setCookie}`);
      assert.ok(!setCookie.includes('Secure'), 'plain HTTP here: no Secure flag (it is set behind an https:// PUBLIC_BASE_URL)');
      assert.ok(!setCookie.includes(TEST_ADMIN_TOKEN));
      const cookie = setCookie.split(';')[0]!;
      const api = await ok<{ queues: Array<{ name: string }> }>(fetch(`${t.baseUrl}/admin/queues/api/queues`, { headers: { cookie } }));
      assert.deepEqual(api.queues.map((q) => q.name).sort(), registered());
      const page = await fetch(`${t.baseUrl}/admin/queues`, { headers: { cookie: `other=1; ${cookie}` } });
      assert.equal(page.status, 200);
      // The cookie opens nothing else: the admin API still wants the Bearer token.
      await refused(fetch(`${t.baseUrl}/admin/v1/overview`, { headers: { cookie } }), 401, 'admin.unauthorized');
    });

    it('a cookie expires, is bound to the admin token, and cannot be forged', () => {
      const now = Date.now();
      const cookie = new QueueDashboardCookie(t.config);
      const value = cookie.issue(now).header.split(';')[0]!;
      assert.equal(cookie.accepts(value, now), true);
      assert.equal(cookie.accepts(value, now + QUEUE_DASHBOARD_COOKIE_TTL_MS + 1), false);
      const otherToken = new QueueDashboardCookie({ ...t.config, env: { ...t.config.env, ADMIN_TOKEN: 'another-admin-token-0123456789' } } as typeof t.config);
      assert.equal(otherToken.accepts(value, now), false);
      const [, expiry, mac] = /^svc_admin_queues=v1\.(\d+)\.(.+)$/.exec(value)!;
      assert.equal(cookie.accepts(`svc_admin_queues=v1.${Number(expiry) + 3_600_000}.${mac}`, now), false, 'a later expiry with the old MAC');
      assert.equal(cookie.accepts(undefined, now), false);
      assert.equal(cookie.accepts('svc_admin_queues=', now), false);
    });
  });

  describe('the console files at /admin/', () => {
    it('serves the page with a strict CSP; unknown /admin/v1 paths still answer the API 404', async () => {
      const page = await fetch(`${t.baseUrl}/admin/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /<div id="app"><\/div>/);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal((await fetch(`${t.baseUrl}/admin`)).status, 200);
      const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script, html);
      const asset = await fetch(`${t.baseUrl}${script}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
      const unknown = await fetch(`${t.baseUrl}/admin/v1/no-such-route`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(unknown.status, 404);
      assert.match(((await unknown.json()) as ErrorBody).error.code, /not_found/);
    });
  });
});
