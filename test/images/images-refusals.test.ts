import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { dataUrl, GENERATIONS, type MediaServer, pngSigned, referenceFixtures, startMediaServer, walletState } from './support/images-helpers.js';

/**
 * Every refusal of an image request: a 400 (402 for money) with its `image.` code in the
 * `{error:{code,message}}` envelope, and nothing changed: wallet figures, ledger, holds and
 * generation rows are what they were. References come from a local HTTPS server the app trusts
 * (plain http refused, as in production).
 */
describe('image generation refusals (sandbox key, real app)', () => {
  let media: MediaServer;
  let t: TestApp;
  let account: TestAccount;
  let png: Buffer;

  before(async () => {
    const fixtures = await referenceFixtures();
    png = fixtures.png;
    media = await startMediaServer({
      '/ref.png': { type: 'image/png', body: fixtures.png },
      // A text file served as an image: the bytes decide, not the header or the name.
      '/notes.png': { type: 'image/png', body: Buffer.from('these are my notes, not a picture\n') },
      '/big.png': { type: 'image/png', body: Buffer.concat([fixtures.png, Buffer.alloc(8 * 1024 * 1024)]) },
      '/moved.png': { type: 'text/plain', body: Buffer.alloc(0), status: 302, headers: { location: '/ref.png' } },
      // Three PNG-signed blobs of 6.5 MiB (each under the 7 MiB cap) and a server that sends 1 MiB then stalls.
      ...Object.fromEntries(['/a.png', '/b.png', '/c.png'].map((path) => [path, { type: 'image/png', body: pngSigned(fixtures.png, 6.5 * 1024 * 1024) }])),
      '/stalled.png': { type: 'image/png', body: pngSigned(fixtures.png, 1024 * 1024), hang: true },
    });
    t = await bootTestApp({ label: 'images-refusals', env: { OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_EXTRA_CA_FILE: media.caFile } });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    await t.close();
    await media.stop();
  });

  const post = (body: unknown, key = account.key) => t.request(GENERATIONS, { method: 'POST', key, json: body });

  const cases: Array<{ name: string; body: () => unknown; code: string; mentions?: string }> = [
    { name: 'lite at 2K', body: () => ({ model: 'vendor-3.1-flash-lite-image', prompt: 'a kite', controls: { size: '2K' } }), code: 'image.unsupported_size' },
    { name: 'lite at 9:21', body: () => ({ model: 'vendor-3.1-flash-lite-image', prompt: 'a kite', controls: { aspectRatio: '9:21' } }), code: 'image.unsupported_aspect_ratio' },
    { name: 'pro at 512', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', controls: { size: '512' } }), code: 'image.unsupported_size' },
    { name: '15 references', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: Array(15).fill(dataUrl(png)) } }), code: 'image.invalid_field', mentions: 'assets.referenceImages' },
    { name: 'a raw gs:// reference', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: ['gs://bucket/cat.png'] } }), code: 'image.invalid_reference', mentions: 'assets.referenceImages.0' },
    { name: 'no prompt and no reference', body: () => ({ model: 'vendor-3-pro-image', controls: { size: '1K' } }), code: 'image.prompt_required' },
    { name: 'an unknown model', body: () => ({ model: 'vendor-2-image', prompt: 'a kite' }), code: 'image.unknown_model' },
    { name: 'a data URL that is not Base64', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: ['data:image/png;base64,@@not*base64@@'] } }), code: 'image.invalid_reference' },
    { name: 'raw text that is neither a URL nor Base64', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: ['cat.png'] } }), code: 'image.invalid_reference' },
    { name: 'raw Base64 of the wrong length', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: ['iVBORw0KGgo'] } }), code: 'image.invalid_reference' },
    { name: 'raw Base64 of a text file', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [Buffer.from('plain text, not an image').toString('base64')] } }), code: 'image.unsupported_reference_format' },
    { name: 'a data URL without ;base64', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: ['data:image/png,rawbytes'] } }), code: 'image.invalid_reference' },
    { name: 'Base64 data of a text file', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [dataUrl(Buffer.from('plain text, not an image'), 'image/png')] } }), code: 'image.unsupported_reference_format' },
    { name: 'an HTTPS reference that is a text file', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [`${media.base}/ref.png`, `${media.base}/notes.png`] } }), code: 'image.unsupported_reference_format', mentions: 'assets.referenceImages.1' },
    { name: 'an HTTPS reference that answers 404', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [`${media.base}/missing.png`] } }), code: 'image.reference_fetch_failed', mentions: '404' },
    { name: 'an HTTPS reference over the 7 MiB cap', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [`${media.base}/big.png`] } }), code: 'image.reference_fetch_failed', mentions: 'too_large' },
    { name: 'a plain http reference (refused as in production)', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [`http://localhost:9/ref.png`] } }), code: 'image.invalid_reference' },
    { name: 'a candidateCount of 2', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { generationConfig: { candidateCount: 2 } } } }), code: 'image.unsupported_candidate_count' },
    { name: 'an unknown field at depth', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { generationConfig: { temperature: 1, responseModalities: ['IMAGE'] } } } }), code: 'image.unknown_field', mentions: 'providerOptions.vendor.generationConfig.responseModalities' },
    { name: 'an unknown field in a safety setting', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE', level: 3 }] } } }), code: 'image.unknown_field' },
    { name: 'a safety setting that is a list', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { safetySettings: [[{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]] } } }), code: 'image.invalid_field' },
    { name: 'an unknown top-level field', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', n: 2 }), code: 'image.unknown_field' },
    { name: 'a prompt over 10,000 characters', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'k'.repeat(10_001) }), code: 'image.prompt_too_long' },
    { name: 'a prompt of 10,001 characters outside the BMP', body: () => ({ model: 'vendor-3.1-flash-image', prompt: '\u{1F3A8}'.repeat(10_001) }), code: 'image.prompt_too_long' },
    // PostgreSQL's jsonb (the row's request snapshot) takes neither: a 400, not a 500.
    { name: 'a prompt with a NUL character', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite\u0000' }), code: 'image.invalid_field', mentions: 'prompt' },
    { name: 'a prompt with an unpaired surrogate', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite \uD800' }), code: 'image.invalid_field', mentions: 'prompt' },
    // The sandbox must refuse what the live upstream would (upstreams.md §1.6), before any hold.
    { name: 'a safety threshold the upstream does not know', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_EVERYTHING' }] } } }), code: 'image.invalid_field', mentions: 'providerOptions.vendor.safetySettings.0.threshold' },
    { name: 'a safety category the upstream does not know', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_VIOLENCE', threshold: 'BLOCK_NONE' }] } } }), code: 'image.invalid_field', mentions: 'providerOptions.vendor.safetySettings.0.category' },
    { name: 'a Vertex-only safety method', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE', method: 'SEVERITY' }] } } }), code: 'image.unknown_field', mentions: 'providerOptions.vendor.safetySettings.0.method' },
    { name: 'an imageConfig in generationConfig (the gateway sets it)', body: () => ({ model: 'vendor-3.1-flash-image', prompt: 'a kite', providerOptions: { vendor: { generationConfig: { imageConfig: { imageSize: '4K' } } } } }), code: 'image.unknown_field', mentions: 'providerOptions.vendor.generationConfig.imageConfig' },
    { name: 'an HTTPS reference that redirects (never followed)', body: () => ({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [`${media.base}/moved.png`] } }), code: 'image.reference_fetch_failed', mentions: 'HTTP 302' },
  ];

  for (const { name, body, code, mentions } of cases) {
    it(`refuses ${name}: 400 ${code}, wallet and rows unchanged`, async () => {
      const before = await walletState(t, account.workspaceId);
      const response = await post(body());
      const answer = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(response.status, 400, JSON.stringify(answer));
      assert.deepEqual(Object.keys(answer), ['error']);
      assert.equal(answer.error.code, code, answer.error.message);
      if (mentions) assert.ok(answer.error.message.includes(mentions), answer.error.message);
      assert.deepEqual(await walletState(t, account.workspaceId), before);
    });
  }

  it('refuses references over 20 MiB together (each under its 7 MiB cap): 400 image.references_too_large, nothing held', async () => {
    // Three PNG-signed blobs of 6.9 MiB: each passes its own cap, together they are 20.7 MiB.
    const blob = pngSigned(png, Math.floor(6.9 * 1024 * 1024));
    const before = await walletState(t, account.workspaceId);
    const response = await post({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: [dataUrl(blob), dataUrl(blob), dataUrl(blob)] } });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.references_too_large');
    assert.deepEqual(await walletState(t, account.workspaceId), before);
  });

  it('stops reading HTTPS references once they pass 20 MiB together: 400 image.references_too_large, without waiting for a stalled one', async () => {
    // 3 × 6.5 MiB + the stalled server's 1 MiB pass the cap. Read one by one to its end, the
    // stalled reference would hold the request for its 15 s timeout and answer reference_fetch_failed.
    const before = await walletState(t, account.workspaceId);
    const references = ['/a.png', '/b.png', '/stalled.png', '/c.png'].map((path) => `${media.base}${path}`);
    const response = await post({ model: 'vendor-3-pro-image', prompt: 'a kite', assets: { referenceImages: references } });
    const answer = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(response.status, 400, JSON.stringify(answer));
    assert.equal(answer.error.code, 'image.references_too_large', answer.error.message);
    assert.deepEqual(await walletState(t, account.workspaceId), before);
  });

  it('answers 402 image.insufficient_balance when the wallet cannot cover the hold, and holds nothing', async () => {
    const poor = await createAccount(t, { creditUsd: 0.1, environment: 'test' });
    const before = await walletState(t, poor.workspaceId);
    // pro at 4K costs 0.24 USD: more than the 0.10 available.
    const response = await post({ model: 'vendor-3-pro-image', prompt: 'a kite', controls: { size: '4K' } }, poor.key);
    assert.equal(response.status, 402);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.insufficient_balance');
    assert.deepEqual(await walletState(t, poor.workspaceId), before);
  });

  it('answers 401 image.unauthorized without a key', async () => {
    const response = await t.request(GENERATIONS, { method: 'POST', json: { model: 'vendor-3-pro-image', prompt: 'a kite' } });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'image.unauthorized');
  });
});

describe('image references on private addresses, with production-like outbound settings', () => {
  let media: MediaServer;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    const { png } = await referenceFixtures();
    media = await startMediaServer({ '/ref.png': { type: 'image/png', body: png } });
    t = await bootTestApp({
      label: 'images-private',
      env: { OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOW_PRIVATE: 'false', OUTBOUND_EXTRA_CA_FILE: media.caFile },
    });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    await t.close();
    await media.stop();
  });

  for (const [name, base] of [['a name that resolves to loopback', () => media.base], ['an IP literal', () => media.ipBase]] as const) {
    it(`refuses a reference on ${name}: 400 image.reference_fetch_failed naming the image, nothing held`, async () => {
      const before = await walletState(t, account.workspaceId);
      const response = await t.request(GENERATIONS, {
        method: 'POST',
        key: account.key,
        json: { model: 'vendor-3.1-flash-image', prompt: 'a kite', assets: { referenceImages: [`${base()}/ref.png`] } },
      });
      const answer = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(response.status, 400);
      assert.equal(answer.error.code, 'image.reference_fetch_failed');
      assert.match(answer.error.message, /assets\.referenceImages\.0: could not be fetched \(address_not_allowed/);
      assert.deepEqual(await walletState(t, account.workspaceId), before);
    });
  }
});
