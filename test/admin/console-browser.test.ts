import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../support/chromium.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { TEST_ADMIN_TOKEN, bootTestApp, type TestApp } from '../support/test-app.js';
import { attemptsOf, jobState, Receiver, terminalTask, waitForDelivery } from '../webhooks/deliveries-helpers.js';
import { createEndpoint, SUCCEEDED } from '../webhooks/endpoints-helpers.js';

/** Committed screenshots of each page, linked from the README (Console). */
const SCREENSHOTS = fileURLToPath(new URL('../../../docs/console/', import.meta.url));
const browser = ensureChromium();
const skip = 'skip' in browser ? browser.skip : false;
if (skip) console.log(`# console browser walk skipped: ${skip}`);

/**
 * The console in a real browser (Debian's Chromium driven by playwright-core), as an operator
 * uses it: sign in → create a workspace → issue a key → credit → see the wallet → revoke; then
 * the other pages (tasks, a task, deliveries, the queue dashboard) and a phone width. Every
 * step is checked against the API as well as on the screen.
 */
describe('admin console in a browser', { skip }, () => {
  let t: TestApp;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let audioTaskId: string;
  let deliveryId: string;
  let receiver: Receiver | undefined;

  const shot = async (name: string, target: Page = page, fullPage = true) => {
    const path = join(SCREENSHOTS, `${name}.png`);
    await target.screenshot({ path, fullPage });
    assert.ok(statSync(path).size > 1000, `${name}.png was written`);
  };
  const adminGet = async <T>(path: string): Promise<T> => {
    const answer = await t.request(path, { admin: true });
    assert.equal(answer.status, 200, path);
    return (await answer.json()) as T;
  };

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    t = await bootTestApp({ label: 'consolebrowser' });
    // A real task (sandbox speech) for the tasks pages, naming a webhook endpoint that answers
    // 404: its delivery fails at once, for the deliveries page (attempts, retry).
    const sandbox = await createAccount(t, { creditUsd: 5, environment: 'test', name: 'Sandbox customer' });
    receiver = await Receiver.start();
    receiver.answer = () => ({ status: 404 });
    const endpoint = await createEndpoint(t, sandbox, { url: receiver.url('/hooks'), events: [SUCCEEDED] });
    audioTaskId = (await terminalTask(t, sandbox, endpoint.id, 'Hello from the console walk.')).id;
    deliveryId = (await waitForDelivery(t, audioTaskId, (row) => row.status === 'failed', 'the delivery failed (404)')).id;
    await eventually(() => jobState(t, deliveryId), (state) => state === 'completed', 'its job ended');

    userDataDir = mkdtempSync(join(tmpdir(), 'svc-console-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: (browser as { path: string }).path,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 860 },
      deviceScaleFactor: 1,
    });
    // A bound on every wait (the machine may be busy with other suites); no assertion is timed.
    context.setDefaultTimeout(60_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    page = context.pages()[0] ?? (await context.newPage());
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await t?.close();
    await receiver?.close();
  });

  it('sign-in → create workspace → issue key → credit → see the wallet → revoke', async () => {
    // Sign in: a wrong token is refused in words and nothing is stored.
    await page.goto(`${t.baseUrl}/admin/`);
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The admin token was refused' }).waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('svc.adminToken')"), null);
    await page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN);
    await shot('01-sign-in', page, false);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('cell', { name: 'webhooks' }).waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('svc.adminToken')"), TEST_ADMIN_TOKEN);
    assert.ok(!page.url().includes(TEST_ADMIN_TOKEN), 'the token is never in a URL');
    await shot('02-overview');

    // Create a workspace.
    await page.getByRole('link', { name: 'Workspaces' }).click();
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await page.getByLabel('Name').fill('Browser Walk Ltd');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { name: 'Browser Walk Ltd' }).waitFor();
    const workspaceId = decodeURIComponent(page.url().split('#/workspaces/')[1]!);
    const workspace = await adminGet<{ name: string; wallet: { balanceUsd: number } }>(`/admin/v1/workspaces/${workspaceId}`);
    assert.equal(workspace.name, 'Browser Walk Ltd');
    assert.equal(workspace.wallet.balanceUsd, 0);

    // Issue a key: the secret is shown once, with a copy button.
    await page.getByLabel('Key name').fill('backend');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const secretBox = page.locator('#issued-key-secret');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    assert.match(secret, /^svc_live_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
    await page.getByRole('cell', { name: 'backend' }).waitFor();
    await shot('03-key-issued');
    const walletAnswer = await t.request('/api/svc/v1/wallet', { key: secret });
    assert.equal(walletAnswer.status, 200, 'the issued key works');

    // Credit, idempotent by reference: the same reference and amount again changes nothing; another amount is refused in words.
    const credit = async (amount: string, reference: string) => {
      await page.getByLabel('Amount (USD)').fill(amount);
      await page.getByLabel('Reference').fill(reference);
      await page.getByRole('button', { name: 'Credit', exact: true }).click();
    };
    await credit('12.5', 'walk-invoice-1');
    await page.getByRole('status').filter({ hasText: 'Credit walk-invoice-1 recorded on the live wallet: balance $12.50' }).waitFor();
    await page.locator('#wallet-live .balance', { hasText: '$12.50' }).waitFor();
    await credit('12.5', 'walk-invoice-1');
    // The first answer's message reads the same: wait for this answer, which gives the form a new
    // reference (else the next fill races it and the form resets under the test).
    // (Read from here, not with waitForFunction: the console's CSP refuses the string eval it polls with.)
    await eventually(() => page.inputValue('#credit-reference'), (reference) => reference !== 'walk-invoice-1', 'the repeated credit answered');
    await page.getByRole('status').filter({ hasText: 'balance $12.50' }).waitFor();
    await credit('13', 'walk-invoice-1');
    await page.getByRole('alert').filter({ hasText: 'Conflict' }).waitFor();

    // See the wallet: the page and the API agree; the ledger shows the one credit.
    await page.getByRole('button', { name: 'Refresh wallets' }).click();
    await page.locator('#wallet-live .balance', { hasText: '$12.50' }).waitFor();
    assert.equal(await page.locator('#wallet-live .available').textContent(), '$12.50');
    assert.equal(await page.locator('#wallet-test .balance').textContent(), '$0.00');
    const wallet = await adminGet<{ balanceUsd: number; availableUsd: number }>(`/admin/v1/workspaces/${workspaceId}/wallet`);
    assert.deepEqual([wallet.balanceUsd, wallet.availableUsd], [12.5, 12.5]);
    const ledger = await adminGet<{ items: Array<{ kind: string; reference: string }> }>(`/admin/v1/workspaces/${workspaceId}/ledger`);
    assert.deepEqual(ledger.items.map((e) => [e.kind, e.reference]), [['credit', 'walk-invoice-1']]);
    await page.getByRole('cell', { name: 'walk-invoice-1' }).waitFor();
    await shot('04-wallet-credited');

    // Revoke, after a confirmation; Cancel changes nothing.
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await t.request('/api/svc/v1/wallet', { key: secret })).status, 200, 'cancelled: the key still works');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').waitFor();
    await shot('05-revoke-confirm', page, false);
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('Key “backend” revoked.').waitFor();
    await page.locator('.badge.revoked').waitFor();
    assert.equal((await t.request('/api/svc/v1/wallet', { key: secret })).status, 401, 'the revoked key is refused');
    await shot('06-key-revoked');
  });

  it('the other pages: workspaces search, tasks, a task, webhook deliveries, the queue dashboard, a phone width', async () => {
    await page.goto(`${t.baseUrl}/admin/#/workspaces`);
    await page.getByRole('searchbox', { name: 'Search workspaces' }).fill('walk');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: /Browser Walk Ltd/ }).waitFor();
    assert.equal(await page.getByRole('link', { name: /Sandbox customer/ }).count(), 0);
    await shot('07-workspaces');

    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    await page.getByRole('combobox').first().selectOption('audio');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: audioTaskId.slice(0, 14) + '…' }).waitFor();
    await shot('08-tasks');

    await page.getByRole('link', { name: audioTaskId.slice(0, 14) + '…' }).click();
    await page.getByRole('heading', { name: audioTaskId }).waitFor();
    await page.getByRole('heading', { name: 'Holds' }).waitFor();
    await page.locator('.badge.settled').waitFor();
    await shot('09-task-detail');

    await page.getByRole('link', { name: 'Webhook deliveries' }).click();
    await page.getByRole('heading', { name: 'Webhook deliveries' }).waitFor();
    await page.getByRole('button', { name: `Attempts of ${deliveryId}` }).click();
    await page.getByRole('heading', { name: `Attempts of ${deliveryId}` }).waitFor();
    await page.getByRole('cell', { name: 'the schedule' }).waitFor();
    await page.getByRole('button', { name: 'Retry now' }).click();
    await page.getByText(`Delivery ${deliveryId} will be attempted again now.`).waitFor();
    // The retry ran: a second attempt, made by hand, is recorded.
    await eventually(() => attemptsOf(t, deliveryId), (attempts) => attempts.some((a) => a.attempt === 2 && a.manual), 'the manual attempt');
    await shot('10-webhook-deliveries');

    // The queue dashboard opens in a new tab with its short-lived cookie (no token in the URL).
    const popup = context.waitForEvent('page');
    await page.getByRole('button', { name: 'Queues ↗' }).click();
    const dashboard = await popup;
    await dashboard.waitForURL(/\/admin\/queues/);
    for (const queue of ['audio', 'maintenance', 'video', 'webhooks']) await dashboard.getByText(queue, { exact: true }).first().waitFor();
    const cookies = await context.cookies(`${t.baseUrl}/admin/queues`);
    const dashboardCookie = cookies.find((cookie) => cookie.name === 'svc_admin_queues');
    assert.ok(dashboardCookie?.httpOnly && dashboardCookie.sameSite === 'Strict', JSON.stringify(cookies));
    await shot('11-queue-dashboard', dashboard, false);
    await dashboard.close();

    // Phone width: the same workspace page, tables as cards.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${t.baseUrl}/admin/#/workspaces`);
    await page.getByRole('link', { name: /Browser Walk Ltd/ }).click();
    await page.locator('#wallet-live .balance', { hasText: '$12.50' }).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(overflow <= 0, `no sideways scrolling at phone width (${overflow}px too wide)`);
    await shot('12-workspace-phone');

    // Signing out forgets the token.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('svc.adminToken')"), null);
  });
});
