import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  dataUrl,
  generationRow,
  GENERATIONS,
  holdLedger,
  imageListCost,
  type MediaServer,
  referenceFixtures,
  startMediaServer,
  walletState,
} from './support/images-helpers.js';

interface Generation {
  id: string;
  model: string;
  status: string;
  outputs: { images: string[]; expiresAt: string; text?: string };
}

/**
 * Synchronous generations on the sandbox (svc_test_ key) through the real app: the answer's
 * exact shape, the public link, the PNG's real pixel size, references over HTTPS and as Base64
 * (PNG, WebP, HEIC, JPEG), the hold and its settlement, failures and safety refusals released,
 * a client that leaves mid-request charged once, the admin task list and the metrics.
 */
describe('image generation (sandbox key, real app)', () => {
  let media: MediaServer;
  let t: TestApp;
  let account: TestAccount;
  let fixtures: Awaited<ReturnType<typeof referenceFixtures>>;

  before(async () => {
    fixtures = await referenceFixtures();
    media = await startMediaServer({
      '/ref.png': { type: 'image/png', body: fixtures.png },
      // Served with a misleading type: the gateway sniffs the bytes.
      '/ref.heic': { type: 'application/octet-stream', body: fixtures.heic },
    });
    t = await bootTestApp({ label: 'images-generation', env: { OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_EXTRA_CA_FILE: media.caFile } });
    account = await createAccount(t, { creditUsd: 20, environment: 'test' });
  });
  after(async () => {
    await t.close();
    await media.stop();
  });

  const post = (body: unknown, init: { signal?: AbortSignal } = {}) => t.request(GENERATIONS, { method: 'POST', key: account.key, json: body, ...init });

  async function generate(body: unknown): Promise<Generation> {
    const response = await post(body);
    const answer = await response.json();
    assert.equal(response.status, 200, JSON.stringify(answer));
    return answer as Generation;
  }

  /** Fetches a link as a browser would: no credentials at all. */
  async function fetchImage(url: string): Promise<{ type: string | null; bytes: Buffer }> {
    const response = await fetch(url);
    assert.equal(response.status, 200);
    return { type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
  }

  it('answers exactly id, model, status, outputs; the link needs no credentials; the hold is captured at the catalogue price', async () => {
    const before = await walletState(t, account.workspaceId);
    const answer = await generate({ model: 'vendor-3-pro-image', prompt: 'a lighthouse at dusk' });
    assert.deepEqual(Object.keys(answer).sort(), ['id', 'model', 'outputs', 'status']);
    assert.match(answer.id, /^image:[0-9a-f-]{36}$/);
    assert.equal(answer.model, 'vendor-3-pro-image');
    assert.equal(answer.status, 'succeeded');
    assert.deepEqual(Object.keys(answer.outputs).sort(), ['expiresAt', 'images']);
    assert.equal(answer.outputs.images.length, 1);
    assert.match(answer.outputs.images[0]!, new RegExp(`^${t.baseUrl}/media/public/[A-Za-z0-9_-]{43}$`));
    assert.ok(!JSON.stringify(answer).includes('base64'), 'never Base64 in the answer');

    const image = await fetchImage(answer.outputs.images[0]!);
    assert.equal(image.type, 'image/png');
    const meta = await sharp(image.bytes).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['png', 1024, 1024]);

    const price = imageListCost('vendor-3-pro-image', '1K');
    const ledger = await holdLedger(t, answer.id);
    assert.deepEqual(ledger, { status: 'settled', amount: price, captured: price, hold: price, capture: price, release: 0n, captureEntries: 1 });
    const afterwards = await walletState(t, account.workspaceId);
    assert.equal(afterwards.balance, before.balance - price);
    assert.equal(afterwards.held, 0n);

    const row = await generationRow(t, answer.id);
    assert.equal(row!.status, 'succeeded');
    assert.equal(row!.charged_micros, price.toString());
    assert.equal(row!.adapter, 'sandbox');
    assert.equal((row!.expires_at as Date).toISOString(), answer.outputs.expiresAt);
    assert.equal((row!.expires_at as Date).getTime() - (row!.completed_at as Date).getTime(), 24 * 3600 * 1000);
  });

  // Each model at each size it offers, with a sample of ratios (pixel sizes: docs/images.md).
  const sizes: Array<[string, string, string, number, number]> = [
    ['vendor-3-pro-image', '1K', '16:9', 1376, 768],
    ['vendor-3-pro-image', '2K', '9:21', 1344, 3168],
    ['vendor-3-pro-image', '4K', '1:1', 4096, 4096],
    ['vendor-3.1-flash-image', '512', '1:1', 512, 512],
    ['vendor-3.1-flash-image', '1K', '4:1', 2048, 512],
    ['vendor-3.1-flash-image', '2K', '3:4', 1792, 2400],
    ['vendor-3.1-flash-image', '4K', '21:9', 6336, 2688],
    ['vendor-3.1-flash-lite-image', '1K', '9:16', 768, 1376],
  ];
  for (const [model, size, aspectRatio, width, height] of sizes) {
    it(`${model} at ${size} ${aspectRatio} answers a ${width}×${height} PNG, charged its catalogue price`, async () => {
      const answer = await generate({ model, prompt: `a paper boat ${size} ${aspectRatio}`, controls: { size, aspectRatio } });
      const meta = await sharp((await fetchImage(answer.outputs.images[0]!)).bytes).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['png', width, height]);
      const price = imageListCost(model as never, size as never);
      assert.equal((await holdLedger(t, answer.id)).captured, price);
    });
  }

  it('takes references over HTTPS and as Base64, raw or as a data URL (PNG, WebP, HEIC, JPEG); the edit derives from the first; the row keeps no bytes', async () => {
    const answer = await generate({
      model: 'vendor-3.1-flash-image',
      prompt: 'make it look like a postcard',
      // Spec › Image generation: "HTTPS URLs or Base64 data": the JPEG is raw Base64, without a data: prefix.
      assets: { referenceImages: [`${media.base}/ref.png`, dataUrl(fixtures.webp, 'image/webp'), `${media.base}/ref.heic`, fixtures.jpeg.toString('base64')] },
    });
    // The first reference is a solid blue (#2266cc): an edit of it, tinted a quarter, stays blue.
    const stats = await sharp((await fetchImage(answer.outputs.images[0]!)).bytes).stats();
    assert.ok(stats.channels[2]!.mean - stats.channels[0]!.mean > 50, `blue over red: ${stats.channels.map((c) => c.mean).join(', ')}`);

    const row = await generationRow(t, answer.id);
    const request = row!.request as { references: Array<{ source: string; mimeType: string; location?: string; bytes: number }> };
    assert.deepEqual(request.references.map((r) => [r.source, r.mimeType]), [['url', 'image/png'], ['data', 'image/webp'], ['url', 'image/heic'], ['data', 'image/jpeg']]);
    assert.equal(request.references[0]!.location, `${media.base}/ref.png`);
    assert.equal(request.references[1]!.bytes, fixtures.webp.length);
    assert.ok(!JSON.stringify(row!.request).includes(fixtures.webp.toString('base64').slice(0, 40)), 'no image bytes in the row');
  });

  it('keeps the shape of the reference in an edit that names no ratio (as the upstream does): a 16:9 picture stays 16:9', async () => {
    const wide = await sharp({ create: { width: 1376, height: 768, channels: 3, background: '#2266cc' } }).png().toBuffer();
    const answer = await generate({ model: 'vendor-3.1-flash-image', prompt: 'the same scene at night', assets: { referenceImages: [dataUrl(wide)] } });
    const meta = await sharp((await fetchImage(answer.outputs.images[0]!)).bytes).metadata();
    assert.deepEqual([meta.width, meta.height], [1376, 768]);
    const row = await generationRow(t, answer.id);
    assert.equal((row!.request as { aspectRatio?: string }).aspectRatio, undefined, 'the row records that no ratio was named');
  });

  it('takes 14 references, the most a request may carry', async () => {
    const answer = await generate({ model: 'vendor-3.1-flash-image', prompt: 'a collage', assets: { referenceImages: Array.from({ length: 14 }, (_, i) => (i % 2 ? dataUrl(fixtures.jpeg, 'image/jpeg') : `${media.base}/ref.png`)) } });
    const row = await generationRow(t, answer.id);
    assert.equal((row!.request as { references: unknown[] }).references.length, 14);
  });

  it('takes an HEIC reference alone, without a prompt (the sandbox draws its fallback picture)', async () => {
    const answer = await generate({ model: 'vendor-3.1-flash-lite-image', assets: { referenceImages: [dataUrl(fixtures.heic, 'image/heic')] } });
    const meta = await sharp((await fetchImage(answer.outputs.images[0]!)).bytes).metadata();
    assert.deepEqual([meta.width, meta.height], [1024, 1024]);
  });

  it('counts the prompt in characters, not UTF-16 units: 10,000 emoji are accepted', async () => {
    const answer = await generate({ model: 'vendor-3.1-flash-lite-image', prompt: '\u{1F3A8}'.repeat(10_000) });
    assert.equal((await generationRow(t, answer.id))!.status, 'succeeded');
  });

  it('documents the route in OpenAPI: every status it answers, the reference caps, the safety settings the upstream takes', async () => {
    const doc = (await (await t.request('/docs/json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const operation = doc.paths[GENERATIONS]!.post!;
    assert.deepEqual(Object.keys(operation.responses).sort(), ['200', '400', '401', '402', '413', '422', '502', '503']);
    for (const code of ['image.unknown_field', 'image.invalid_reference', 'image.references_too_large', 'image.content_refused']) {
      assert.ok(operation.responses['400']!.description.includes(code), code);
    }
    assert.ok(operation.responses['502']!.description.includes('image.upstream_failed'));
    const schemas = doc.components.schemas;
    assert.equal(schemas.CreateImageGenerationDto!.properties.prompt!.maxLength, 10_000);
    assert.match(String(schemas.ImageAssetsDto!.properties.referenceImages!.description), /7 MiB each and 20 MiB together/);
    assert.deepEqual(Object.keys(schemas.ImageSafetySettingDto!.properties).sort(), ['category', 'threshold']);
    assert.ok((schemas.ImageSafetySettingDto!.properties.threshold!.enum as string[]).includes('BLOCK_ONLY_HIGH'));
  });

  it('releases the hold when the upstream fails ([sandbox:fail]): 502 image.upstream_failed, nothing charged', async () => {
    const before = await walletState(t, account.workspaceId);
    const response = await post({ model: 'vendor-3.1-flash-image', prompt: '[sandbox:fail] a kite' });
    assert.equal(response.status, 502);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.upstream_failed');
    const [row] = (await t.db.query(`SELECT id, status, failure_reason FROM image_generation WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1`, [account.workspaceId])) as Array<{ id: string; status: string; failure_reason: string }>;
    assert.equal(row!.status, 'failed');
    assert.match(row!.failure_reason, /sandbox:fail/);
    const price = imageListCost('vendor-3.1-flash-image', '1K');
    assert.deepEqual(await holdLedger(t, row!.id), { status: 'released', amount: price, captured: 0n, hold: price, capture: 0n, release: price, captureEntries: 0 });
    const afterwards = await walletState(t, account.workspaceId);
    assert.deepEqual([afterwards.balance, afterwards.held], [before.balance, 0n]);
  });

  it('releases the hold on a safety refusal ([sandbox:safety]): 400 image.content_refused, nothing charged', async () => {
    const before = await walletState(t, account.workspaceId);
    const response = await post({ model: 'vendor-3-pro-image', prompt: '[sandbox:safety] something unsafe' });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.content_refused');
    const [row] = (await t.db.query(`SELECT id, status FROM image_generation WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 1`, [account.workspaceId])) as Array<{ id: string; status: string }>;
    assert.equal(row!.status, 'failed');
    assert.equal((await holdLedger(t, row!.id)).status, 'released');
    const afterwards = await walletState(t, account.workspaceId);
    assert.deepEqual([afterwards.balance, afterwards.held], [before.balance, 0n]);
  });

  it('charges exactly once for an image generated after the client disconnected mid-request', async () => {
    const before = await walletState(t, account.workspaceId);
    const client = new AbortController();
    const pending = post({ model: 'vendor-3.1-flash-lite-image', prompt: '[sandbox:delay=1500] a quiet harbour' }, { signal: client.signal }).catch((error: unknown) => error);
    // Leave once the hold is taken (the row is running), while the upstream is still working.
    const running = await eventually(
      async () => (await t.db.query(`SELECT id, status FROM image_generation WHERE workspace_id = $1 AND status = 'running'`, [account.workspaceId])) as Array<{ id: string }>,
      (rows) => rows.length === 1,
      'the generation to start',
    );
    client.abort();
    assert.ok((await pending) instanceof Error, 'the client gave up');
    const id = running[0]!.id;
    const row = await eventually(() => generationRow(t, id), (r) => r?.status !== 'running', 'the generation to end');
    assert.equal(row!.status, 'succeeded');
    // The row turns succeeded, then the hold is settled (the request's last step, with no client to answer).
    await eventually(() => holdLedger(t, id), (ledger) => ledger.status !== 'open', 'the hold to be settled');
    const price = imageListCost('vendor-3.1-flash-lite-image', '1K');
    assert.deepEqual(await holdLedger(t, id), { status: 'settled', amount: price, captured: price, hold: price, capture: price, release: 0n, captureEntries: 1 });
    const afterwards = await walletState(t, account.workspaceId);
    assert.deepEqual([afterwards.balance, afterwards.held], [before.balance - price, 0n]);
    assert.equal(afterwards.imageHolds, before.imageHolds + 1);
  });

  it('lists generations in the admin task list as kind=image, and counts them by model and outcome', async () => {
    const answer = await generate({ model: 'vendor-3.1-flash-lite-image', prompt: 'a red balloon' });
    const response = await t.request(`/admin/v1/tasks?kind=image&workspaceId=${account.workspaceId}&limit=100`, { admin: true });
    assert.equal(response.status, 200);
    const page = (await response.json()) as { items: Array<Record<string, unknown>> };
    const item = page.items.find((i) => i.id === answer.id);
    assert.ok(item, 'the generation is listed');
    assert.equal(item.kind, 'image');
    assert.equal(item.status, 'succeeded');
    assert.equal(item.model, 'vendor-3.1-flash-lite-image');
    assert.equal(item.chargedUsd, 0.02);
    assert.ok(page.items.every((i) => i.kind === 'image'));
    assert.ok(page.items.some((i) => i.status === 'failed'), 'the failed generations are listed too');

    const text = await (await t.request('/metrics')).text();
    const succeeded = metricSample(text, 'svc_image_generations_total', '{model="vendor-3.1-flash-lite-image",outcome="succeeded"}');
    const [{ n }] = (await t.db.query(`SELECT count(*)::int AS n FROM image_generation WHERE model = 'vendor-3.1-flash-lite-image' AND status = 'succeeded'`)) as Array<{ n: number }>;
    assert.equal(succeeded, n);
    assert.equal(metricSample(text, 'svc_image_generations_total', '{model="vendor-3-pro-image",outcome="refused_safety"}'), 1);
    assert.equal(metricSample(text, 'svc_image_generations_total', '{model="vendor-3.1-flash-image",outcome="failed"}'), 1);
  });
});
