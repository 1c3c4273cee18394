import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GeminiVideoAdapter } from '../../libs/providers/index.js';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTask, TASKS, wallet } from './support/video-helpers.js';
import { fundedAppForSuite } from '../support/suite-app.js';

const BASE = 'vendor-omni-flash-preview';
const V11 = 'vendor-omni-1.1-flash-preview';
const IMG = 'https://media.example.com/a.png';
const IMG2 = 'https://media.example.com/b.jpg';
const VID = 'https://media.example.com/c.mp4';

/** [name, body, status, code, field named in the message] */
const REFUSALS: Array<[string, Record<string, unknown>, number, string, string]> = [
  ['missing model', { prompt: 'x' }, 400, 'video.invalid_field', 'model'],
  ['unknown model', { model: 'vendor-omni-2', prompt: 'x' }, 400, 'video.invalid_field', 'model'],
  ['missing prompt', { model: V11 }, 400, 'video.invalid_field', 'prompt'],
  ['empty prompt', { model: V11, prompt: '' }, 400, 'video.invalid_field', 'prompt'],
  ['prompt over 10,000 characters', { model: V11, prompt: 'a'.repeat(10_001) }, 400, 'video.invalid_field', 'prompt'],
  ['non-string prompt', { model: V11, prompt: 42 }, 400, 'video.invalid_field', 'prompt'],
  // PostgreSQL stores neither: these were 500s at the insert.
  ['a NUL character in the prompt', { model: V11, prompt: 'a cat\u0000a dog' }, 400, 'video.invalid_field', 'prompt'],
  ['an unpaired surrogate in the prompt', { model: V11, prompt: 'a cat \uD800 a dog' }, 400, 'video.invalid_field', 'prompt'],
  ['a NUL character in an asset URL', { model: V11, prompt: 'x', assets: { firstFrameImage: 'https://example.com/a\u0000.png' } }, 400, 'video.invalid_field', 'assets.firstFrameImage'],
  ['unknown mode', { model: V11, prompt: 'x', mode: 'dance' }, 400, 'video.invalid_field', 'mode'],
  ['null mode', { model: V11, prompt: 'x', mode: null }, 400, 'video.invalid_field', 'mode'],
  ['unknown top-level field', { model: V11, prompt: 'x', seed: 1 }, 400, 'video.unknown_field', 'seed'],
  ['assets not an object', { model: V11, prompt: 'x', assets: [] }, 400, 'video.invalid_field', 'assets'],
  ['unknown asset field', { model: V11, prompt: 'x', assets: { audio: IMG } }, 400, 'video.unknown_field', 'assets.audio'],
  ['ftp asset', { model: V11, prompt: 'x', assets: { firstFrameImage: 'ftp://x/a.png' } }, 400, 'video.invalid_field', 'assets.firstFrameImage'],
  ['base64 asset', { model: V11, prompt: 'x', assets: { firstFrameImage: 'data:image/png;base64,AAAA' } }, 400, 'video.invalid_field', 'assets.firstFrameImage'],
  ['asset:// asset', { model: V11, prompt: 'x', assets: { firstFrameImage: 'asset://a' } }, 400, 'video.invalid_field', 'assets.firstFrameImage'],
  ['local path asset', { model: V11, prompt: 'x', assets: { sourceVideo: '/tmp/a.mp4' } }, 400, 'video.invalid_field', 'assets.sourceVideo'],
  ['gs:// without object', { model: V11, prompt: 'x', assets: { sourceVideo: 'gs://bucket' } }, 400, 'video.invalid_field', 'assets.sourceVideo'],
  ['empty referenceImages', { model: V11, prompt: 'x', assets: { referenceImages: [] } }, 400, 'video.invalid_field', 'assets.referenceImages'],
  ['11 referenceImages', { model: V11, prompt: 'x', assets: { referenceImages: Array(11).fill(IMG) } }, 400, 'video.invalid_field', 'assets.referenceImages'],
  ['bad URI among referenceImages', { model: V11, prompt: 'x', assets: { referenceImages: [IMG, 'nope'] } }, 400, 'video.invalid_field', 'assets.referenceImages'],
  ['4 referenceVideos', { model: V11, prompt: 'x', assets: { referenceVideos: [VID, VID, VID, VID] } }, 400, 'video.invalid_field', 'assets.referenceVideos'],
  ['empty referenceVideos', { model: V11, prompt: 'x', assets: { referenceVideos: [] } }, 400, 'video.invalid_field', 'assets.referenceVideos'],
  ['controls not an object', { model: V11, prompt: 'x', controls: 5 }, 400, 'video.invalid_field', 'controls'],
  ['unknown control', { model: V11, prompt: 'x', controls: { fps: 24 } }, 400, 'video.unknown_field', 'controls.fps'],
  ['duration 2', { model: V11, prompt: 'x', controls: { duration: 2 } }, 400, 'video.invalid_field', 'controls.duration'],
  ['duration 11', { model: V11, prompt: 'x', controls: { duration: 11 } }, 400, 'video.invalid_field', 'controls.duration'],
  ['duration 5.5', { model: V11, prompt: 'x', controls: { duration: 5.5 } }, 400, 'video.invalid_field', 'controls.duration'],
  ['duration as string', { model: V11, prompt: 'x', controls: { duration: '5' } }, 400, 'video.invalid_field', 'controls.duration'],
  ['resolution 480p', { model: V11, prompt: 'x', controls: { resolution: '480p' } }, 400, 'video.invalid_field', 'controls.resolution'],
  ['ratio 1:1', { model: V11, prompt: 'x', controls: { ratio: '1:1' } }, 400, 'video.invalid_field', 'controls.ratio'],
  ['generateAudio false', { model: V11, prompt: 'x', controls: { generateAudio: false } }, 400, 'video.invalid_field', 'controls.generateAudio'],
  ['outputCount 2', { model: V11, prompt: 'x', controls: { outputCount: 2 } }, 400, 'video.invalid_field', 'controls.outputCount'],
  ['vendor options with a property', { model: V11, prompt: 'x', providerOptions: { vendor: { seed: 1 } } }, 400, 'video.invalid_field', 'providerOptions.vendor'],
  ['vendor options not an object', { model: V11, prompt: 'x', providerOptions: { vendor: [] } }, 400, 'video.invalid_field', 'providerOptions.vendor'],
  ['unknown providerOptions namespace', { model: V11, prompt: 'x', providerOptions: { voice: {} } }, 400, 'video.unknown_field', 'providerOptions.voice'],
  ['frames + references', { model: V11, prompt: 'x', assets: { firstFrameImage: IMG, referenceImages: [IMG2] } }, 400, 'video.conflicting_assets', 'assets'],
  ['frames + source video', { model: V11, prompt: 'x', assets: { firstFrameImage: IMG, sourceVideo: VID } }, 400, 'video.conflicting_assets', 'assets'],
  ['references + source video', { model: V11, prompt: 'x', assets: { referenceVideos: [VID], sourceVideo: VID } }, 400, 'video.conflicting_assets', 'assets'],
  ['last frame without first', { model: V11, prompt: 'x', assets: { lastFrameImage: IMG } }, 400, 'video.mode_assets_mismatch', 'assets.firstFrameImage'],
  ['text_to_video with assets', { model: V11, prompt: 'x', mode: 'text_to_video', assets: { firstFrameImage: IMG } }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['image_first_frame without image', { model: V11, prompt: 'x', mode: 'image_first_frame' }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['image_first_frame with a last frame', { model: V11, prompt: 'x', mode: 'image_first_frame', assets: { firstFrameImage: IMG, lastFrameImage: IMG2 } }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['image_first_last_frame with one frame', { model: V11, prompt: 'x', mode: 'image_first_last_frame', assets: { firstFrameImage: IMG } }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['multimodal_reference without references', { model: V11, prompt: 'x', mode: 'multimodal_reference' }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['video_extend without source', { model: V11, prompt: 'x', mode: 'video_extend' }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['video_modify with an image', { model: V11, prompt: 'x', mode: 'video_modify', assets: { firstFrameImage: IMG } }, 400, 'video.mode_assets_mismatch', 'mode'],
  ['base model: image_first_frame', { model: BASE, prompt: 'x', assets: { firstFrameImage: IMG } }, 400, 'video.unsupported_mode', 'mode'],
  ['base model: image_first_last_frame', { model: BASE, prompt: 'x', assets: { firstFrameImage: IMG, lastFrameImage: IMG2 } }, 400, 'video.unsupported_mode', 'mode'],
  ['base model: multimodal_reference', { model: BASE, prompt: 'x', assets: { referenceImages: [IMG] } }, 400, 'video.unsupported_mode', 'mode'],
  ['base model: video_extend', { model: BASE, prompt: 'x', mode: 'video_extend', assets: { sourceVideo: VID } }, 400, 'video.unsupported_mode', 'mode'],
  ['base model: 1080p', { model: BASE, prompt: 'x', controls: { resolution: '1080p' } }, 400, 'video.unsupported_resolution', 'controls.resolution'],
  ['base model: 4k', { model: BASE, prompt: 'x', controls: { resolution: '4k' } }, 400, 'video.unsupported_resolution', 'controls.resolution'],
  ['base model: 360p', { model: BASE, prompt: 'x', controls: { resolution: '360p' } }, 400, 'video.unsupported_resolution', 'controls.resolution'],
];

describe('video tasks API: validation, money, ownership', () => {
  let t: TestApp;
  let account: TestAccount;

  fundedAppForSuite({ label: 'videoapi', creditUsd: 10 }, (booted) => ({ t, account } = booted));

  for (const [name, body, status, code, field] of REFUSALS) {
    it(`refuses ${name}: ${status} ${code} naming ${field}, wallet unchanged`, async () => {
      const before = await wallet(t, account);
      const answer = await createTask(t, account, body);
      assert.equal(answer.status, status, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, code, answer.body.error.message);
      assert.ok(answer.body.error.message.startsWith(field), `"${answer.body.error.message}" should name ${field}`);
      assert.deepEqual(await wallet(t, account), before);
    });
  }

  it('refuses a body that is not a JSON object', async () => {
    const response = await t.request(TASKS, { method: 'POST', key: account.key, json: ['x'] });
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { error: { code: string } }).error.code, /^(video|request)\./);
  });

  it('refuses http:// media when OUTBOUND_ALLOW_HTTP is off', async () => {
    const strict = await bootTestApp({ label: 'videostrict', env: { OUTBOUND_ALLOW_HTTP: 'false' } });
    try {
      const a = await createAccount(strict, { creditUsd: 10 });
      const answer = await createTask(strict, a, { model: V11, prompt: 'x', assets: { referenceImages: [IMG, 'http://media.example.com/x.png'] } });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.error.code, 'video.invalid_field');
      assert.match(answer.body.error.message, /^assets\.referenceImages\.1: /);
    } finally {
      await strict.close();
    }
  });

  it('accepts the full valid shape (empty vendor options, explicit defaults) and holds the maximum price', async () => {
    const before = await wallet(t, account);
    const answer = await createTask(t, account, {
      model: V11,
      prompt: 'x [sandbox:delay=60000]',
      controls: { duration: 5, resolution: '4k', ratio: '9:16', generateAudio: true, outputCount: 1 },
      providerOptions: { vendor: {} },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(Object.keys(answer.body).slice(0, 4), ['id', 'model', 'status', 'outputs']);
    assert.deepEqual(answer.body.outputs, { videos: [], images: [] });
    const afterWallet = await wallet(t, account);
    assert.equal(afterWallet.heldUsd - before.heldUsd, 3); // 10 s × 0.30 USD at 4k
    assert.equal(afterWallet.balanceUsd, before.balanceUsd);
  });

  it('402 when the wallet cannot cover the maximum price; nothing is created', async () => {
    const poor = await createAccount(t, { creditUsd: 0.5 });
    const answer = await createTask(t, poor, { model: V11, prompt: 'x', controls: { resolution: '1080p' } });
    assert.equal(answer.status, 402);
    assert.equal(answer.body.error.code, 'video.insufficient_balance');
    const rows = await t.db.query('SELECT 1 FROM video_task WHERE api_key_id = $1', [poor.keyId]);
    assert.equal(rows.length, 0);
    assert.deepEqual(await wallet(t, poor), { balanceUsd: 0.5, heldUsd: 0, availableUsd: 0.5 });
  });

  it('ownership: another key (same workspace or not) gets 404, like a missing id', async () => {
    const created = await createTask(t, account, { model: BASE, prompt: 'mine [sandbox:delay=60000]' });
    const sibling = await issueKey(t, account.workspaceId);
    const stranger = await createAccount(t, { creditUsd: 1 });
    for (const key of [sibling.key, stranger.key]) {
      const response = await t.request(`${TASKS}/${created.body.id}`, { key });
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'video.not_found');
    }
    for (const id of ['omni:00000000-0000-4000-8000-000000000000', 'nope', created.body.id.slice(5)]) {
      const response = await t.request(`${TASKS}/${encodeURIComponent(id)}`, { key: account.key });
      assert.equal(response.status, 404);
    }
    const mine = await t.request(`${TASKS}/${created.body.id}`, { key: account.key });
    assert.equal(mine.status, 200);
  });

  it('DELETE answers 405 video.operation_not_supported on both paths; the task and hold are untouched', async () => {
    const created = await createTask(t, account, { model: BASE, prompt: 'keep [sandbox:delay=60000]' });
    for (const path of [`${TASKS}/${created.body.id}`, `/contents/generations/tasks/${created.body.id}`]) {
      const response = await t.request(path, { method: 'DELETE', key: account.key });
      assert.equal(response.status, 405);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'video.operation_not_supported');
    }
    const [hold] = await t.db.query<{ status: string }>(`SELECT status FROM hold WHERE subject_id = $1`, [created.body.id]);
    assert.equal(hold!.status, 'open');
  });

  it('listing: newest first, cursor paging, filters, and isolation between keys', async () => {
    const a = await createAccount(t, { creditUsd: 10 });
    const b = await issueKey(t, a.workspaceId);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createTask(t, a, { model: i % 2 ? V11 : BASE, prompt: `n${i} [sandbox:delay=60000]` })).body.id);
    const other = (await createTask(t, b, { model: BASE, prompt: 'b [sandbox:delay=60000]' })).body.id;

    const page1 = (await (await t.request(`${TASKS}?limit=2`, { key: a.key })).json()) as { items: Array<{ id: string }>; hasMore: boolean; nextCursor: string };
    assert.deepEqual(page1.items.map((i) => i.id), [ids[4], ids[3]]);
    assert.equal(page1.hasMore, true);
    const page2 = (await (await t.request(`${TASKS}?limit=2&after=${page1.nextCursor}`, { key: a.key })).json()) as { items: Array<{ id: string }>; nextCursor: string };
    assert.deepEqual(page2.items.map((i) => i.id), [ids[2], ids[1]]);
    const page3 = (await (await t.request(`${TASKS}?limit=2&after=${page2.nextCursor}`, { key: a.key })).json()) as { items: Array<{ id: string }>; hasMore: boolean; nextCursor: null };
    assert.deepEqual(page3.items.map((i) => i.id), [ids[0]]);
    assert.equal(page3.hasMore, false);
    assert.equal(page3.nextCursor, null);

    const filtered = (await (await t.request(`${TASKS}?model=${V11}`, { key: a.key })).json()) as { items: Array<{ id: string; model: string }> };
    assert.deepEqual(filtered.items.map((i) => i.id), [ids[3], ids[1]]);
    const none = (await (await t.request(`${TASKS}?status=succeeded`, { key: a.key })).json()) as { items: unknown[] };
    assert.deepEqual(none.items, []);

    const bList = (await (await t.request(TASKS, { key: b.key })).json()) as { items: Array<{ id: string }> };
    assert.deepEqual(bList.items.map((i) => i.id), [other]);

    for (const query of ['limit=0', 'limit=101', 'status=done', 'after=%%%', 'foo=1']) {
      const response = await t.request(`${TASKS}?${query}`, { key: a.key });
      assert.equal(response.status, 400, query);
    }
  });

  it('503 video.unavailable before any hold when the live upstream circuit is open', async () => {
    const live = await bootTestApp({ label: 'videocircuit', env: { GEMINI_API_KEY: 'k', GEMINI_BASE_URL: 'http://127.0.0.1:9' } });
    try {
      const a = await createAccount(live, { creditUsd: 10 });
      live.app.get(GeminiVideoAdapter).circuit.trip();
      const before = await wallet(live, a);
      const answer = await createTask(live, a, { model: BASE, prompt: 'x' });
      assert.equal(answer.status, 503);
      assert.equal(answer.body.error.code, 'video.unavailable');
      assert.deepEqual(await wallet(live, a), before);
      // A test key still runs on the sandbox, whatever the live upstream does.
      const testKey = await createAccount(live, { creditUsd: 10, environment: 'test' });
      assert.equal((await createTask(live, testKey, { model: BASE, prompt: 'x [sandbox:delay=60000]' })).status, 200);
    } finally {
      await live.close();
    }
  });

  it('401 in the video envelope without a key', async () => {
    const response = await t.request(TASKS, { method: 'POST', json: { model: BASE, prompt: 'x' } });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'video.unauthorized');
  });
});
