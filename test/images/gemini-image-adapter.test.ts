import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { CircuitBreaker, GeminiImageAdapter, type ImageGenerationRequest, type ImageOutcome } from '../../libs/providers/index.js';
import { FAKE_GEMINI_IMAGE_KEY, FakeGeminiImageServer } from '../fakes/gemini-image-server.js';

function request(extra: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest {
  return { generationId: 'image:00000000-0000-4000-8000-00000000000a', model: 'vendor-3.1-flash-image', prompt: 'a paper boat on a pond', references: [], size: '1K', aspectRatio: '1:1', ...extra };
}

type Failed = Extract<ImageOutcome, { kind: 'failed' }>;
type Refused = Extract<ImageOutcome, { kind: 'refused' }>;
type Succeeded = Extract<ImageOutcome, { kind: 'succeeded' }>;

function expectKind<K extends ImageOutcome['kind']>(outcome: ImageOutcome, kind: K): Extract<ImageOutcome, { kind: K }> {
  assert.equal(outcome.kind, kind, JSON.stringify(outcome));
  return outcome as Extract<ImageOutcome, { kind: K }>;
}

describe('GeminiImageAdapter against the fake Gemini image server', () => {
  let fake: FakeGeminiImageServer;
  let adapter: GeminiImageAdapter;

  before(async () => {
    fake = await new FakeGeminiImageServer().start();
    adapter = new GeminiImageAdapter({ apiKey: FAKE_GEMINI_IMAGE_KEY, baseUrl: fake.url });
  });
  after(async () => {
    await adapter.close();
    await fake.stop();
  });

  it('sends the prompt and each reference as inline data, sampling + responseModalities + imageConfig, and the safety settings', async () => {
    const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    const webp = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#993366' } }).webp().toBuffer();
    const safetySettings = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }];
    expectKind(
      await adapter.generate(
        request({
          model: 'vendor-3-pro-image',
          size: '2K',
          aspectRatio: '16:9',
          references: [
            { mimeType: 'image/jpeg', bytes: jpeg },
            { mimeType: 'image/webp', bytes: webp },
          ],
          generationConfig: { temperature: 0.4, topP: 0.9 },
          safetySettings,
        }),
      ),
      'succeeded',
    );
    const recorded = fake.requests.at(-1)!;
    assert.equal(recorded.path, '/v1beta/models/gemini-3-pro-image-preview:generateContent');
    assert.equal(recorded.apiKey, FAKE_GEMINI_IMAGE_KEY);
    assert.deepEqual(recorded.body, {
      contents: [
        {
          role: 'user',
          parts: [{ text: 'a paper boat on a pond' }, { inlineData: { mimeType: 'image/jpeg', data: jpeg.toString('base64') } }, { inlineData: { mimeType: 'image/webp', data: webp.toString('base64') } }],
        },
      ],
      generationConfig: { temperature: 0.4, topP: 0.9, responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
      safetySettings,
    });
  });

  it('sends no text part without a prompt and no safetySettings when none are given', async () => {
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).png().toBuffer();
    await adapter.generate(request({ prompt: undefined, references: [{ mimeType: 'image/png', bytes: png }], size: '512', aspectRatio: '9:21' }));
    const body = fake.requests.at(-1)!.body as { contents: Array<{ parts: unknown[] }>; generationConfig: unknown; safetySettings?: unknown };
    assert.deepEqual(body.contents[0]!.parts, [{ inlineData: { mimeType: 'image/png', data: png.toString('base64') } }]);
    assert.deepEqual(body.generationConfig, { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '9:21', imageSize: '512' } });
    assert.equal('safetySettings' in body, false);
  });

  it('sends no aspectRatio for an edit that names none, so the upstream follows the references', async () => {
    const png = await sharp({ create: { width: 16, height: 9, channels: 3, background: '#000' } }).png().toBuffer();
    await adapter.generate(request({ references: [{ mimeType: 'image/png', bytes: png }], size: '2K', aspectRatio: undefined }));
    const body = fake.requests.at(-1)!.body as { generationConfig: unknown };
    assert.deepEqual(body.generationConfig, { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { imageSize: '2K' } });
  });

  for (const [model, upstream] of [
    ['vendor-3-pro-image', 'gemini-3-pro-image-preview'],
    ['vendor-3.1-flash-image', 'gemini-3.1-flash-image-preview'],
    ['vendor-3.1-flash-lite-image', 'gemini-3.1-flash-lite-image-preview'],
  ] as const) {
    it(`calls ${upstream} for ${model}`, async () => {
      await adapter.generate(request({ model }));
      assert.equal(fake.requests.at(-1)!.path, `/v1beta/models/${upstream}:generateContent`);
    });
  }

  it('returns the first inline image with the text and the reported usage', async () => {
    const outcome = expectKind(await adapter.generate(request()), 'succeeded') as Succeeded;
    assert.equal(outcome.image.mimeType, 'image/png');
    assert.ok(outcome.image.bytes.equals(fake.png));
    assert.equal(outcome.text, 'Here is your picture.');
    assert.deepEqual(outcome.usage, { inputTokens: 14, outputTokens: 1120 + 96 });
  });

  it('skips thought parts (draft images and their text) and takes the first final image', async () => {
    const draft = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const second = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0000ff' } }).png().toBuffer();
    fake.next({
      kind: 'answer',
      parts: [
        { text: 'Sketching the boat.', thought: true },
        { inlineData: { mimeType: 'image/png', data: draft.toString('base64') }, thought: true },
        { inlineData: { mimeType: 'image/png', data: fake.png.toString('base64') }, thoughtSignature: 'c2lnbmF0dXJl' },
        { inlineData: { mimeType: 'image/png', data: second.toString('base64') } },
      ],
    });
    const outcome = expectKind(await adapter.generate(request()), 'succeeded') as Succeeded;
    assert.ok(outcome.image.bytes.equals(fake.png));
    assert.equal(outcome.text, undefined);
  });

  for (const finishReason of ['IMAGE_SAFETY', 'PROHIBITED_CONTENT', 'IMAGE_PROHIBITED_CONTENT', 'SAFETY']) {
    it(`maps finish reason ${finishReason} without an image to a safety refusal`, async () => {
      fake.next({ kind: 'answer', parts: [], finishReason, finishMessage: 'Unable to show the generated image.' });
      const outcome = expectKind(await adapter.generate(request()), 'refused') as Refused;
      assert.equal(outcome.category, 'safety');
      assert.match(outcome.reason, new RegExp(finishReason));
    });
  }

  it('maps a blocked prompt (promptFeedback.blockReason, no candidates) to a safety refusal', async () => {
    fake.next({ kind: 'blocked', blockReason: 'PROHIBITED_CONTENT' });
    const outcome = expectKind(await adapter.generate(request()), 'refused') as Refused;
    assert.equal(outcome.category, 'safety');
    assert.match(outcome.reason, /PROHIBITED_CONTENT/);
  });

  it('maps an answer with text only to no_image, and NO_IMAGE / IMAGE_OTHER / IMAGE_RECITATION likewise', async () => {
    fake.next({ kind: 'answer', parts: [{ text: 'I can describe a boat, but here is no picture.' }] });
    const textOnly = expectKind(await adapter.generate(request()), 'refused') as Refused;
    assert.equal(textOnly.category, 'no_image');
    assert.match(textOnly.reason, /text only/);
    for (const finishReason of ['NO_IMAGE', 'IMAGE_OTHER', 'IMAGE_RECITATION']) {
      fake.next({ kind: 'answer', parts: [], finishReason });
      const outcome = expectKind(await adapter.generate(request()), 'refused') as Refused;
      assert.equal(outcome.category, 'no_image', finishReason);
    }
  });

  it('maps a 429 to a retryable failure with the RetryInfo delay or the Retry-After header', async () => {
    fake.next({ kind: 'error', status: 429, rpcStatus: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded', retryDelay: '34s' });
    const fromDetail = expectKind(await adapter.generate(request()), 'failed') as Failed;
    assert.deepEqual({ retryable: fromDetail.retryable, status: fromDetail.status, retryAfterSeconds: fromDetail.retryAfterSeconds }, { retryable: true, status: 429, retryAfterSeconds: 34 });
    assert.match(fromDetail.reason, /RESOURCE_EXHAUSTED: Quota exceeded/);
    fake.next({ kind: 'error', status: 429, rpcStatus: 'RESOURCE_EXHAUSTED', message: 'Slow down', retryAfter: '7' });
    assert.equal((expectKind(await adapter.generate(request()), 'failed') as Failed).retryAfterSeconds, 7);
  });

  for (const [status, rpcStatus] of [
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
  ] as const) {
    it(`maps a ${status} ${rpcStatus} to a retryable failure`, async () => {
      fake.next({ kind: 'error', status, rpcStatus, message: `fake ${rpcStatus}` });
      const outcome = expectKind(await adapter.generate(request()), 'failed') as Failed;
      assert.deepEqual({ retryable: outcome.retryable, status: outcome.status }, { retryable: true, status });
      assert.equal(outcome.retryAfterSeconds, undefined);
    });
  }

  it('maps a 400 (bad argument, bad key) to a failure that is not retryable', async () => {
    fake.next({ kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'Unsupported image size.' });
    const outcome = expectKind(await adapter.generate(request()), 'failed') as Failed;
    assert.deepEqual({ retryable: outcome.retryable, status: outcome.status }, { retryable: false, status: 400 });
    const wrongKey = new GeminiImageAdapter({ apiKey: 'not-the-key', baseUrl: fake.url });
    try {
      const refused = expectKind(await wrongKey.generate(request()), 'failed') as Failed;
      assert.match(refused.reason, /API key not valid/);
      assert.equal(refused.retryable, false);
    } finally {
      await wrongKey.close();
    }
  });

  it('fails an answer larger than the cap without keeping it (not retryable), and a body that is not JSON (retryable)', async () => {
    const capped = new GeminiImageAdapter({ apiKey: FAKE_GEMINI_IMAGE_KEY, baseUrl: fake.url, maxResponseBytes: 1024 * 1024 });
    try {
      fake.next({ kind: 'oversize', bytes: 2 * 1024 * 1024 });
      const oversize = expectKind(await capped.generate(request()), 'failed') as Failed;
      assert.equal(oversize.retryable, false);
      assert.match(oversize.reason, /exceeded 1048576 bytes/);
      // The same size under the cap is an image: the cap, not the shape, refused it.
      fake.next({ kind: 'oversize', bytes: 512 * 1024 });
      assert.equal((expectKind(await capped.generate(request()), 'succeeded') as Succeeded).image.bytes.length, 512 * 1024);
    } finally {
      await capped.close();
    }
    fake.next({ kind: 'garbage' });
    const garbage = expectKind(await adapter.generate(request()), 'failed') as Failed;
    assert.deepEqual({ retryable: garbage.retryable, status: garbage.status }, { retryable: true, status: 502 });
  });

  it('reports an unreachable upstream as a retryable failure, and a cancelled call as one', async () => {
    const nowhere = new GeminiImageAdapter({ apiKey: FAKE_GEMINI_IMAGE_KEY, baseUrl: 'http://127.0.0.1:9' });
    try {
      assert.equal((expectKind(await nowhere.generate(request()), 'failed') as Failed).retryable, true);
    } finally {
      await nowhere.close();
    }
    const controller = new AbortController();
    controller.abort();
    const before = fake.requests.length;
    const cancelled = expectKind(await adapter.generate(request({ signal: controller.signal })), 'failed') as Failed;
    assert.deepEqual({ retryable: cancelled.retryable, reason: cancelled.reason }, { retryable: true, reason: 'the call was cancelled' });
    assert.equal(fake.requests.length, before, 'nothing was sent');
  });

  it('opens its circuit after consecutive 5xx answers (available() false), not after 4xx or refusals', async () => {
    const circuit = new CircuitBreaker(2, 60_000);
    const guarded = new GeminiImageAdapter({ apiKey: FAKE_GEMINI_IMAGE_KEY, baseUrl: fake.url, circuit });
    try {
      fake.next({ kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'bad' });
      fake.next({ kind: 'error', status: 429, rpcStatus: 'RESOURCE_EXHAUSTED', message: 'slow' });
      fake.next({ kind: 'answer', parts: [], finishReason: 'IMAGE_SAFETY' });
      for (let i = 0; i < 3; i++) await guarded.generate(request());
      assert.equal(guarded.available(), true);
      fake.next({ kind: 'error', status: 500, rpcStatus: 'INTERNAL', message: 'boom' });
      fake.next({ kind: 'error', status: 503, rpcStatus: 'UNAVAILABLE', message: 'busy' });
      for (let i = 0; i < 2; i++) await guarded.generate(request());
      assert.equal(guarded.available(), false);
    } finally {
      await guarded.close();
    }
  });

  it('is credentialled only with a key', async () => {
    const keyless = new GeminiImageAdapter({ apiKey: '', baseUrl: fake.url });
    assert.equal(keyless.credentialled(), false);
    assert.equal(adapter.credentialled(), true);
    assert.deepEqual({ name: adapter.name, live: adapter.live }, { name: 'gemini-image', live: true });
    await keyless.close();
  });
});
