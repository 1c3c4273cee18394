import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeGeminiImageServer } from '../fakes/gemini-image-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { PRODUCTION_ENV } from '../support/production-env.js';
import { dataUrl, GENERATIONS, holdLedger, imageListCost, referenceFixtures } from './support/images-helpers.js';

/**
 * The route with a live key on the `gemini-image` adapter against the fake Gemini image server:
 * what reaches the upstream (inline references, forwarded settings), `outputs.text`, and how each
 * upstream outcome reads to the client, always with the hold released when nothing is delivered.
 */
describe('image generation through the live adapter (fake Gemini upstream)', () => {
  let fake: FakeGeminiImageServer;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    fake = await new FakeGeminiImageServer().start();
    t = await bootTestApp({ label: 'images-live', env: { GEMINI_API_KEY: 'fake-gemini-key', GEMINI_BASE_URL: fake.url } });
    account = await createAccount(t, { creditUsd: 10 });
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  const post = (body: unknown) => t.request(GENERATIONS, { method: 'POST', key: account.key, json: body });
  const lastRow = async () =>
    ((await t.db.query(`SELECT id, status, adapter FROM image_generation WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1`, [account.workspaceId])) as Array<{ id: string; status: string; adapter: string }>)[0]!;

  it('sends the prompt, the references inline and the settings; answers the image link and the text', async () => {
    const { webp } = await referenceFixtures();
    const response = await post({
      model: 'vendor-3-pro-image',
      prompt: 'a teapot',
      assets: { referenceImages: [dataUrl(webp, 'image/webp')] },
      controls: { size: '2K', aspectRatio: '4:3' },
      providerOptions: { vendor: { generationConfig: { temperature: 0.5 }, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] } },
    });
    const answer = (await response.json()) as { id: string; outputs: { images: string[]; text?: string } };
    assert.equal(response.status, 200, JSON.stringify(answer));
    assert.equal(answer.outputs.text, 'Here is your picture.');
    const image = await fetch(answer.outputs.images[0]!);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await image.arrayBuffer()), fake.png);

    const sent = fake.requests.at(-1)!;
    assert.match(sent.path, /gemini-3-pro-image-preview:generateContent$/);
    const body = sent.body as { contents: Array<{ parts: Array<Record<string, unknown>> }>; generationConfig: Record<string, unknown>; safetySettings: unknown };
    assert.deepEqual(body.contents[0]!.parts, [{ text: 'a teapot' }, { inlineData: { mimeType: 'image/webp', data: webp.toString('base64') } }]);
    assert.equal(body.generationConfig.temperature, 0.5);
    assert.deepEqual(body.generationConfig.imageConfig, { aspectRatio: '4:3', imageSize: '2K' });
    assert.deepEqual(body.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }]);
    assert.equal((await lastRow()).adapter, 'gemini-image');
    assert.equal((await holdLedger(t, answer.id)).captured, imageListCost('vendor-3-pro-image', '2K'));
  });

  const outcomes: Array<{ name: string; script: Parameters<FakeGeminiImageServer['next']>[0]; status: number; code: string; retryAfter?: string }> = [
    { name: 'a blocked prompt', script: { kind: 'blocked', blockReason: 'PROHIBITED_CONTENT' }, status: 400, code: 'image.content_refused' },
    { name: 'IMAGE_SAFETY', script: { kind: 'answer', parts: [], finishReason: 'IMAGE_SAFETY' }, status: 400, code: 'image.content_refused' },
    { name: 'a text-only answer', script: { kind: 'answer', parts: [{ text: 'I cannot draw that, here is a poem.' }] }, status: 422, code: 'image.no_image' },
    { name: 'a 429 with RetryInfo', script: { kind: 'error', status: 429, rpcStatus: 'RESOURCE_EXHAUSTED', message: 'quota', retryDelay: '7s' }, status: 503, code: 'image.upstream_unavailable', retryAfter: '7' },
    { name: 'a 500', script: { kind: 'error', status: 500, rpcStatus: 'INTERNAL', message: 'boom' }, status: 503, code: 'image.upstream_unavailable' },
    { name: 'a 400 from the upstream', script: { kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'bad' }, status: 502, code: 'image.upstream_failed' },
    // What the public link would serve from our origin is judged by its bytes, not the named type.
    {
      name: 'a scriptable SVG as the image',
      script: { kind: 'answer', parts: [{ inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64') } }] },
      status: 502,
      code: 'image.upstream_failed',
    },
    {
      name: 'text bytes named image/png',
      script: { kind: 'answer', parts: [{ inlineData: { mimeType: 'image/png', data: Buffer.from('hello, not an image').toString('base64') } }] },
      status: 502,
      code: 'image.upstream_failed',
    },
  ];
  for (const { name, script, status, code, retryAfter } of outcomes) {
    it(`maps ${name} to ${status} ${code} and releases the hold`, async () => {
      const before = await liveWallet();
      fake.next(script);
      const response = await post({ model: 'vendor-3.1-flash-image', prompt: 'a teapot' });
      assert.equal(response.status, status);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, code);
      if (retryAfter) assert.equal(response.headers.get('retry-after'), retryAfter);
      const row = await lastRow();
      assert.equal(row.status, 'failed');
      assert.equal((await holdLedger(t, row.id)).status, 'released');
      assert.deepEqual(await liveWallet(), { balance: before.balance, held: 0n });
    });
  }

  it('serves the image with the type its bytes have, not the type the upstream named', async () => {
    const { jpeg } = await referenceFixtures();
    fake.next({ kind: 'answer', parts: [{ inlineData: { mimeType: 'image/png', data: jpeg.toString('base64') } }] });
    const response = await post({ model: 'vendor-3.1-flash-image', prompt: 'a teapot' });
    const answer = (await response.json()) as { outputs: { images: string[] } };
    assert.equal(response.status, 200, JSON.stringify(answer));
    const image = await fetch(answer.outputs.images[0]!);
    assert.equal(image.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(Buffer.from(await image.arrayBuffer()), jpeg);
  });

  async function liveWallet(): Promise<{ balance: bigint; held: bigint }> {
    const [w] = (await t.db.query(`SELECT balance_micros::text AS b, held_micros::text AS h FROM wallet WHERE workspace_id = $1 AND environment = 'live'`, [account.workspaceId])) as Array<{ b: string; h: string }>;
    return { balance: BigInt(w!.b), held: BigInt(w!.h) };
  }
});

describe('production without GEMINI_API_KEY: live keys get 503 image.unavailable, test keys the sandbox', () => {
  let t: TestApp;

  before(async () => {
    t = await bootTestApp({
      label: 'images-prod',
      env: PRODUCTION_ENV,
    });
  });
  after(async () => {
    await t.close();
  });

  it('refuses a live key before any hold, and serves a test key from the sandbox', async () => {
    const live = await createAccount(t, { creditUsd: 10 });
    const response = await t.request(GENERATIONS, { method: 'POST', key: live.key, json: { model: 'vendor-3.1-flash-image', prompt: 'a teapot' } });
    assert.equal(response.status, 503);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.unavailable');
    const [counts] = (await t.db.query(
      `SELECT (SELECT count(*) FROM hold WHERE workspace_id = $1)::int AS holds, (SELECT count(*) FROM image_generation WHERE workspace_id = $1)::int AS rows`,
      [live.workspaceId],
    )) as Array<{ holds: number; rows: number }>;
    assert.deepEqual({ ...counts }, { holds: 0, rows: 0 });

    const sandbox = await createAccount(t, { creditUsd: 10, environment: 'test' });
    const ok = await t.request(GENERATIONS, { method: 'POST', key: sandbox.key, json: { model: 'vendor-3.1-flash-image', prompt: 'a teapot' } });
    const answer = (await ok.json()) as { outputs: { images: string[] } };
    assert.equal(ok.status, 200);
    assert.match(answer.outputs.images[0]!, /^https:\/\/svc\.example\.test\/media\/public\//);
  });
});
