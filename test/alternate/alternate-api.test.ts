import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { SandboxAlternateVideoProvider } from '../../libs/providers/index.js';
import { AlternateWorkSources } from '../../src/modules/alternate-video/alternate-work-sources.js';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { createAlt, download, getAlt, isMp4, ledgerOf, rowCount, SHARED, storedObjects, waitForAltTerminal, wallet } from './support/alternate-helpers.js';

const NOT_AN_IMAGE = Buffer.from('just some text, not an image at all').toString('base64');

/** [name, body, status, error_code, the field the message starts with] — refused before any hold. */
const REFUSALS: Array<[string, unknown, number, string, string]> = [
  ['missing prompt', {}, 400, 'provider.invalid_field', 'prompt'],
  ['empty prompt', { prompt: '' }, 400, 'provider.invalid_field', 'prompt'],
  ['prompt over 2,500 characters', { prompt: 'a'.repeat(2501) }, 400, 'provider.invalid_field', 'prompt'],
  ['non-string prompt', { prompt: 42 }, 400, 'provider.invalid_field', 'prompt'],
  ['NUL in the prompt', { prompt: 'a\u0000b' }, 400, 'provider.invalid_field', 'prompt'],
  ['unpaired surrogate in the negative prompt', { prompt: 'x', negativePrompt: 'a\ud800b' }, 400, 'provider.invalid_field', 'negativePrompt'],
  ['unknown model', { prompt: 'x', model: 'kling-v9' }, 400, 'provider.invalid_field', 'model'],
  ['duration 7', { prompt: 'x', duration: 7 }, 400, 'provider.invalid_field', 'duration'],
  ['duration as a string', { prompt: 'x', duration: '5' }, 400, 'provider.invalid_field', 'duration'],
  ['aspect ratio 4:3', { prompt: 'x', aspectRatio: '4:3' }, 400, 'provider.invalid_field', 'aspectRatio'],
  ['mode ultra', { prompt: 'x', mode: 'ultra' }, 400, 'provider.invalid_field', 'mode'],
  ['null mode', { prompt: 'x', mode: null }, 400, 'provider.invalid_field', 'mode'],
  ['empty negative prompt', { prompt: 'x', negativePrompt: '' }, 400, 'provider.invalid_field', 'negativePrompt'],
  ['unknown field', { prompt: 'x', cfg_scale: 0.5 }, 400, 'provider.unknown_field', 'cfg_scale'],
  ['body not an object', ['x'], 400, 'provider.invalid_field', 'request body'],
  ['ftp image', { prompt: 'x', image: 'ftp://example.com/a.png' }, 400, 'provider.invalid_image', 'image'],
  ['text data URL', { prompt: 'x', image: 'data:text/plain;base64,AAAA' }, 400, 'provider.invalid_image', 'image'],
  ['Base64 that is not an image', { prompt: 'x', imageTail: NOT_AN_IMAGE }, 400, 'provider.invalid_image', 'imageTail'],
  ['not Base64 at all', { prompt: 'x', image: 'this is ~not~ base64!' }, 400, 'provider.invalid_image', 'image'],
];

/** Two codes per range of the spec's table (Errors › Envelopes) and the status each answers. */
const CODE_TABLE: Array<[number, number]> = [
  [1000, 401], [1004, 401],
  [1100, 429], [1102, 429],
  [1103, 403],
  [1200, 400], [1201, 400],
  [1202, 404], [1203, 404],
  [1300, 400], [1301, 400],
  [1302, 429], [1304, 429],
  [5000, 502], [5001, 503], [5002, 504],
];

describe('alternate video API (sandbox): validation, code table, shared endpoint, money, ownership', () => {
  let t: TestApp;
  let account: TestAccount;
  let media: Server;
  let mediaBase = '';
  let png: Buffer;

  fundedAppForSuite({ label: 'altapi', creditUsd: 20 }, (booted) => ({ t, account } = booted));

  before(async () => {
    png = await sharp({ create: { width: 320, height: 320, channels: 3, background: '#3366ff' } }).png().toBuffer();
    media = createServer((request, response) => {
      if (request.url === '/frame.png') response.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => media.close(() => resolve())));

  async function assertNothingHeld(before: { balanceUsd: number }): Promise<void> {
    const now = await wallet(t, account);
    assert.equal(now.heldUsd, 0);
    assert.equal(now.balanceUsd, before.balanceUsd);
  }

  for (const [name, body, status, code, field] of REFUSALS) {
    it(`refuses ${name}: ${status} ${code} in the alternate envelope, nothing held, no task`, async () => {
      const before = await wallet(t, account);
      const rows = await rowCount(t, account.keyId);
      const answer = await createAlt(t, account, body);
      assert.equal(answer.status, status);
      assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'error_code', 'error_params']);
      assert.equal(answer.body.error_code, code);
      assert.ok(answer.body.error.startsWith(field), answer.body.error);
      // The upstream was never asked: no upstreamCode.
      assert.deepEqual(answer.body.error_params, { provider: 'kling', status, upstreamCode: 0 });
      await assertNothingHeld(before);
      assert.equal(await rowCount(t, account.keyId), rows);
    });
  }

  it('refuses 60,000 unknown keys, and an object where a string goes, before the validation pipe walks them', async () => {
    const before = await wallet(t, account);
    const crowded: Record<string, number> = { prompt: 1 };
    for (let i = 0; i < 60_000; i++) crowded[`k${i}`] = i;
    const started = performance.now();
    const answer = await createAlt(t, account, crowded);
    const elapsedMs = performance.now() - started;
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error_code, 'provider.unknown_field');
    assert.equal(answer.body.error, 'k0: unknown field');
    console.log(`60,000 unknown keys refused in ${elapsedMs.toFixed(0)} ms`);
    const nested: Record<string, number> = {};
    for (let i = 0; i < 60_000; i++) nested[`k${i}`] = i;
    const wrongType = await createAlt(t, account, { prompt: nested });
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.error_code, 'provider.invalid_field');
    assert.ok(wrongType.body.error.startsWith('prompt: '));
    await assertNothingHeld(before);
  });

  it('refuses an image URL that answers 404 and an aspect ratio with an image (400, nothing held)', async () => {
    const before = await wallet(t, account);
    const missing = await createAlt(t, account, { prompt: 'x', image: `${mediaBase}/missing.png` });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error_code, 'provider.invalid_image');
    assert.deepEqual(missing.body.error_params, { provider: 'kling', status: 400, upstreamCode: 0 });
    const ratio = await createAlt(t, account, { prompt: 'x', image: `${mediaBase}/frame.png`, aspectRatio: '9:16' });
    assert.equal(ratio.status, 400);
    assert.equal(ratio.body.error_code, 'provider.invalid_field');
    assert.ok(ratio.body.error.startsWith('aspectRatio'));
    await assertNothingHeld(before);
  });

  it('refuses a bad key with 401 provider.unauthorized in the alternate envelope', async () => {
    const answer = await createAlt(t, { key: 'svc_live_nope' }, { prompt: 'x' });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error_code, 'provider.unauthorized');
    assert.deepEqual(answer.body.error_params, { provider: 'kling', status: 401, upstreamCode: 0 });
    // Before the body's bound too (the global key guard runs before the route's body guard).
    const crowded = await createAlt(t, { key: 'svc_live_nope' }, { prompt: 'x', image: { nested: true } });
    assert.equal(crowded.status, 401);
    assert.equal(crowded.body.error_code, 'provider.unauthorized');
  });

  it('answers 402 provider.insufficient_balance when the wallet cannot hold the price: no task', async () => {
    const poor = await createAccount(t, { creditUsd: 0.1 });
    const answer = await createAlt(t, poor, { prompt: 'x', duration: 10, mode: 'pro' });
    assert.equal(answer.status, 402);
    assert.equal(answer.body.error_code, 'provider.insufficient_balance');
    assert.deepEqual(answer.body.error_params, { provider: 'kling', status: 402, upstreamCode: 0 });
    assert.equal(await rowCount(t, poor.keyId), 0);
  });

  for (const [code, status] of CODE_TABLE) {
    it(`maps upstream code ${code} to ${status} with upstreamCode, and releases the hold`, async () => {
      const before = await wallet(t, account);
      const answer = await createAlt(t, account, { prompt: `refuse me [sandbox:reject=${code}]` });
      assert.equal(answer.status, status);
      assert.deepEqual(Object.keys(answer.body).sort(), ['error', 'error_code', 'error_params']);
      assert.equal(answer.body.error_code, 'provider.request_failed');
      assert.equal(typeof answer.body.error, 'string');
      assert.ok(!answer.body.error.includes('sandbox'), 'no upstream text');
      assert.deepEqual(answer.body.error_params, { provider: 'kling', status, upstreamCode: code });
      await assertNothingHeld(before);
    });
  }

  it('creates a task, polls it through the shared endpoint to succeeded, serves the MP4 and charges the measured price', async () => {
    const before = await wallet(t, account);
    const created = await createAlt(t, account, { prompt: 'a fox in the snow [sandbox:delay=300]', duration: 5, mode: 'std', aspectRatio: '9:16' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.match(created.body.id, /^alt:[0-9a-f-]{36}$/);
    assert.equal(created.body.model, 'kling-v2-6');
    assert.ok(['queued', 'running'].includes(created.body.status));
    assert.deepEqual(created.body.outputs, { videos: [], images: [] });
    // Held at creation: 5 s × 0.07 USD (kling-v2-6, std).
    assert.equal((await wallet(t, account)).heldUsd, before.heldUsd + 0.35);
    const task = await waitForAltTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.outputs.videos.length, 1);
    assert.ok(task.outputs.urlsExpireAt && Date.parse(task.outputs.urlsExpireAt) - Date.now() <= 3600_000);
    assert.ok(task.outputs.expiresAt && Math.abs(Date.parse(task.outputs.expiresAt) - Date.parse(task.updatedAt) - 7 * 86400_000) < 1000);
    assert.equal(task.usage.billedSeconds, 5);
    assert.equal(task.usage.chargedUsd, 0.35);
    assert.ok(isMp4(await download(task.outputs.videos[0]!)));
    const after = await wallet(t, account);
    assert.equal(after.heldUsd, before.heldUsd);
    assert.equal(Math.round((before.balanceUsd - after.balanceUsd) * 1e6), 350_000);
    const ledger = await ledgerOf(t, task.id);
    assert.equal(ledger.holds.length, 1);
    assert.equal(ledger.captures, 1);
    // Each read mints a fresh link.
    const again = await getAlt(t, account, task.id);
    assert.equal(again.status, 'succeeded');
    assert.equal(again.outputs.videos.length, 1);
  });

  it('a lost create answer ([sandbox:uncertain]) answers 200 reconciliationRequired and ends succeeded, created once', async () => {
    const created = await createAlt(t, account, { prompt: 'lost [sandbox:uncertain]' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.phase, 'reconciliationRequired');
    const task = await waitForAltTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(task.phase, undefined);
    assert.equal(t.app.get(SandboxAlternateVideoProvider).creates.get(created.body.id), 1);
    assert.equal((await ledgerOf(t, task.id)).captures, 1);
  });

  it('a task left in `creating` by a dead API process is looked up, never created again', async () => {
    const created = await createAlt(t, account, { prompt: 'orphan [sandbox:delay=1500]' });
    const id = created.body.id as string;
    // As if the API process had died after committing the row, before the create's answer.
    await t.db.query(`UPDATE alternate_task SET phase = 'creating', upstream_task_id = NULL, updated_at = now() - interval '5 minutes' WHERE id = $1`, [id]);
    const task = await waitForAltTerminal(t, account, id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(t.app.get(SandboxAlternateVideoProvider).creates.get(id), 1);
    const ledger = await ledgerOf(t, id);
    assert.equal(ledger.captures, 1);
    assert.equal(await storedObjects(t, id), 1);
  });

  it('[sandbox:fail] ends failed with a fixed reason and releases the hold', async () => {
    const before = await wallet(t, account);
    const created = await createAlt(t, account, { prompt: 'doomed [sandbox:fail]' });
    const task = await waitForAltTerminal(t, account, created.body.id);
    assert.equal(task.status, 'failed');
    assert.equal(task.failureReason, 'the video provider failed to generate the video');
    assert.deepEqual(task.outputs, { videos: [], images: [] });
    assert.equal(task.usage.chargedUsd, 0);
    const after = await wallet(t, account);
    assert.equal(after.balanceUsd, before.balanceUsd);
    assert.equal(after.heldUsd, before.heldUsd);
  });

  it('retention: after seven days the shared media sweep deletes the video and the task shows no link', async () => {
    const created = await createAlt(t, account, { prompt: 'short-lived' });
    const done = await waitForAltTerminal(t, account, created.body.id);
    assert.equal(done.status, 'succeeded');
    await t.db.query(`UPDATE alternate_task SET expires_at = now() - interval '1 second' WHERE id = $1`, [done.id]);
    assert.ok((await t.app.get(AlternateWorkSources).sweepExpiredMedia()) >= 1);
    const after = await getAlt(t, account, done.id);
    assert.equal(after.status, 'succeeded');
    assert.deepEqual(after.outputs.videos, []);
    assert.equal(after.outputs.urlsExpireAt, undefined);
    assert.equal(await storedObjects(t, done.id), 0);
    const response = await fetch(done.outputs.videos[0]!);
    assert.notEqual(response.status, 200);
  });

  it('creates an image-to-video task from a fetched PNG and from Base64', async () => {
    const fromUrl = await createAlt(t, account, { prompt: 'move [sandbox:delay=200]', image: `${mediaBase}/frame.png`, mode: 'pro' });
    assert.equal(fromUrl.status, 200, JSON.stringify(fromUrl.body));
    assert.equal(fromUrl.body.kind, 'image_to_video');
    const fromData = await createAlt(t, account, { prompt: 'move [sandbox:delay=200]', imageTail: `data:image/png;base64,${png.toString('base64')}` });
    assert.equal(fromData.status, 200, JSON.stringify(fromData.body));
    const done = await waitForAltTerminal(t, account, fromUrl.body.id);
    assert.equal(done.status, 'succeeded', done.failureReason);
    assert.equal(done.usage.chargedUsd, 0.7);
    await waitForAltTerminal(t, account, fromData.body.id);
  });

  it('refuses DELETE on both paths with 405 provider.operation_not_supported: hold and task untouched', async () => {
    const created = await createAlt(t, account, { prompt: 'slow one [sandbox:delay=4000]', duration: 10 });
    assert.equal(created.status, 200);
    const id = created.body.id as string;
    const heldBefore = (await wallet(t, account)).heldUsd;
    const holdBefore = await ledgerOf(t, id);
    for (const path of [`${SHARED}/${id}`, `/contents/generations/tasks/${id}`]) {
      const response = await t.request(path, { method: 'DELETE', key: account.key });
      assert.equal(response.status, 405, path);
      assert.equal(response.headers.get('allow'), 'GET');
      const body: any = await response.json();
      assert.deepEqual(Object.keys(body).sort(), ['error', 'error_code', 'error_params']);
      assert.equal(body.error_code, 'provider.operation_not_supported');
      assert.deepEqual(body.error_params, { provider: 'kling', status: 405, upstreamCode: 0 });
    }
    assert.equal((await wallet(t, account)).heldUsd, heldBefore);
    assert.deepEqual(await ledgerOf(t, id), holdBefore);
    assert.equal(holdBefore.holds[0]!.status, 'open');
    const task = await getAlt(t, account, id);
    assert.ok(['queued', 'running'].includes(task.status));
    // The task goes on to succeed: nothing was cancelled.
    assert.equal((await waitForAltTerminal(t, account, id)).status, 'succeeded');
  });

  it("answers another key's alt task as not found (GET and DELETE), and a missing one too", async () => {
    const created = await createAlt(t, account, { prompt: 'mine [sandbox:delay=100]' });
    const other = await issueKey(t, account.workspaceId);
    for (const method of ['GET', 'DELETE'] as const) {
      const response = await t.request(`${SHARED}/${created.body.id}`, { method, key: other.key });
      assert.equal(response.status, 404, method);
      assert.equal(((await response.json()) as any).error.code, 'video.not_found');
    }
    const missing = await t.request(`${SHARED}/alt:00000000-0000-4000-8000-000000000000`, { key: account.key });
    assert.equal(missing.status, 404);
    await waitForAltTerminal(t, account, created.body.id);
  });

  it('lists alternate tasks with omni tasks on the shared list, filterable by model', async () => {
    const omni = await t.request(SHARED, { method: 'POST', key: account.key, json: { model: 'vendor-omni-flash-preview', prompt: 'omni [sandbox:delay=100]', controls: { duration: 3 } } });
    assert.equal(omni.status, 200);
    const omniId = ((await omni.json()) as any).id as string;
    const alt = await createAlt(t, account, { prompt: 'listed [sandbox:delay=100]' });
    const page: any = await (await t.request(`${SHARED}?limit=2`, { key: account.key })).json();
    assert.deepEqual(page.items.map((i: { id: string }) => i.id), [alt.body.id, omniId]);
    assert.equal(page.hasMore, true);
    const next: any = await (await t.request(`${SHARED}?limit=100&after=${encodeURIComponent(page.nextCursor)}`, { key: account.key })).json();
    assert.ok(!next.items.some((i: { id: string }) => i.id === alt.body.id || i.id === omniId));
    const onlyAlt: any = await (await t.request(`${SHARED}?limit=100&model=kling-v2-6`, { key: account.key })).json();
    assert.ok(onlyAlt.items.length >= 2);
    assert.ok(onlyAlt.items.every((i: { id: string }) => i.id.startsWith('alt:')));
    const other = await issueKey(t, account.workspaceId);
    const foreign: any = await (await t.request(SHARED, { key: other.key })).json();
    assert.deepEqual(foreign.items, []);
    await waitForAltTerminal(t, account, alt.body.id);
  });

  it('lists alternate tasks on the admin task list (kind=alternate)', async () => {
    const response = await t.request(`/admin/v1/tasks?kind=alternate&workspaceId=${account.workspaceId}`, { admin: true });
    assert.equal(response.status, 200);
    const body: any = await response.json();
    assert.ok(body.items.length > 0);
    assert.ok(body.items.every((i: { kind: string; id: string }) => i.kind === 'alternate' && i.id.startsWith('alt:')));
  });
});
