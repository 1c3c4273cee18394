import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { ImageAspectRatio, ImageGenerationRequest, ImageModelId, ImageOutcome, ImageSizeName, ReferenceImage } from './image-provider.js';
import { promptPalette, type Rgb } from './sandbox-image-picture.js';
import { SandboxImageProvider } from './sandbox-image.provider.js';

const sandbox = new SandboxImageProvider();

function request(extra: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest {
  return { generationId: 'image:00000000-0000-4000-8000-000000000001', model: 'vendor-3.1-flash-image', prompt: 'a lighthouse at dusk', references: [], size: '1K', aspectRatio: '1:1', ...extra };
}

function image(outcome: ImageOutcome): Buffer {
  assert.equal(outcome.kind, 'succeeded', JSON.stringify(outcome));
  const succeeded = outcome as Extract<ImageOutcome, { kind: 'succeeded' }>;
  assert.equal(succeeded.image.mimeType, 'image/png');
  return succeeded.image.bytes;
}

async function meanColour(png: Buffer): Promise<Rgb> {
  const { channels } = await sharp(png).stats();
  return { r: channels[0]!.mean, g: channels[1]!.mean, b: channels[2]!.mean };
}

/**
 * Width × height as the upstream publishes them (Gemini image models' resolution tables), written
 * out rather than computed: the sandbox must reproduce them. Every allowed size of every model,
 * each at a sample of ratios.
 */
const EXPECTED: Array<[ImageModelId, ImageSizeName, ImageAspectRatio, number, number]> = [
  ['vendor-3-pro-image', '1K', '1:1', 1024, 1024],
  ['vendor-3-pro-image', '1K', '16:9', 1376, 768],
  ['vendor-3-pro-image', '1K', '2:3', 848, 1264],
  ['vendor-3-pro-image', '2K', '16:9', 2752, 1536],
  ['vendor-3-pro-image', '2K', '4:5', 1856, 2304],
  ['vendor-3-pro-image', '4K', '1:1', 4096, 4096],
  ['vendor-3-pro-image', '4K', '21:9', 6336, 2688],
  ['vendor-3-pro-image', '1K', '9:21', 672, 1584],
  ['vendor-3.1-flash-image', '512', '1:1', 512, 512],
  ['vendor-3.1-flash-image', '512', '16:9', 688, 384],
  ['vendor-3.1-flash-image', '512', '1:4', 256, 1024],
  ['vendor-3.1-flash-image', '1K', '3:4', 896, 1200],
  ['vendor-3.1-flash-image', '1K', '8:1', 3072, 384],
  ['vendor-3.1-flash-image', '2K', '9:16', 1536, 2752],
  ['vendor-3.1-flash-image', '2K', '4:3', 2400, 1792],
  ['vendor-3.1-flash-image', '4K', '1:8', 1536, 12288],
  ['vendor-3.1-flash-image', '4K', '3:2', 5056, 3392],
  ['vendor-3.1-flash-lite-image', '1K', '1:1', 1024, 1024],
  ['vendor-3.1-flash-lite-image', '1K', '5:4', 1152, 928],
  ['vendor-3.1-flash-lite-image', '1K', '4:1', 2048, 512],
];

describe('SandboxImageProvider: pixel sizes', () => {
  for (const [model, size, aspectRatio, width, height] of EXPECTED) {
    it(`${model} at ${size} ${aspectRatio} is a ${width}×${height} PNG`, async () => {
      const png = image(await sandbox.generate(request({ model, size, aspectRatio })));
      const metadata = await sharp(png).metadata();
      assert.equal(metadata.format, 'png');
      assert.deepEqual([metadata.width, metadata.height], [width, height]);
    });
  }

  it('refuses a size or ratio the model does not offer (the domain validates first), not retryable', async () => {
    for (const extra of [{ model: 'vendor-3.1-flash-lite-image', size: '2K' }, { model: 'vendor-3.1-flash-lite-image', aspectRatio: '9:21' }, { model: 'vendor-3-pro-image', size: '512' }] as const) {
      const outcome = await sandbox.generate(request(extra));
      assert.equal(outcome.kind, 'failed');
      assert.equal((outcome as { retryable: boolean }).retryable, false);
    }
  });
});

describe('SandboxImageProvider: pictures', () => {
  it('draws the same picture for the same prompt and another for another prompt', async () => {
    const first = image(await sandbox.generate(request()));
    const again = image(await sandbox.generate(request({ generationId: 'image:00000000-0000-4000-8000-000000000002' })));
    const other = image(await sandbox.generate(request({ prompt: 'a field of sunflowers' })));
    assert.ok(first.equals(again));
    assert.ok(!first.equals(other));
    // Visibly different: the average colours are apart, not only some bytes.
    const [a, b] = [await meanColour(first), await meanColour(other)];
    assert.ok(Math.abs(a.r - b.r) + Math.abs(a.g - b.g) + Math.abs(a.b - b.b) > 10, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  });

  it('directives do not change the picture', async () => {
    const plain = image(await sandbox.generate(request()));
    const delayed = image(await sandbox.generate(request({ prompt: 'a lighthouse [sandbox:delay=1] at dusk' })));
    assert.ok(plain.equals(delayed));
  });

  const reference = { r: 30, g: 140, b: 220 };
  const encoders: Array<[ReferenceImage['mimeType'], (image: sharp.Sharp) => sharp.Sharp]> = [
    ['image/png', (i) => i.png()],
    ['image/jpeg', (i) => i.jpeg({ quality: 95 })],
    ['image/webp', (i) => i.webp({ lossless: true })],
    // HEIF with AV1 (AVIF) is what the prebuilt libvips decodes.
    ['image/heif', (i) => i.heif({ compression: 'av1', lossless: true })],
  ];
  for (const [mimeType, encode] of encoders) {
    it(`derives an edit from a ${mimeType} reference: its colours tinted a quarter toward the prompt's, at the requested size`, async () => {
      const bytes = await encode(sharp({ create: { width: 300, height: 200, channels: 3, background: reference } })).toBuffer();
      const png = image(await sandbox.generate(request({ references: [{ mimeType, bytes }], size: '1K', aspectRatio: '16:9' })));
      const metadata = await sharp(png).metadata();
      assert.deepEqual([metadata.width, metadata.height], [1376, 768]);
      const tint = promptPalette('a lighthouse at dusk').colours[0]!;
      const mean = await meanColour(png);
      for (const channel of ['r', 'g', 'b'] as const) {
        const expected = 0.75 * reference[channel] + 0.25 * tint[channel];
        assert.ok(Math.abs(mean[channel] - expected) < 4, `${channel}: ${mean[channel]} vs ${expected}`);
      }
    });
  }

  it('without a ratio, follows the first reference: the listed ratio nearest its shape as displayed (the upstream default)', async () => {
    const shaped = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: reference } }).png().toBuffer();
    const cases: Array<[ImageModelId, Buffer, number, number]> = [
      ['vendor-3.1-flash-image', await shaped(320, 180), 1376, 768], // 16:9
      ['vendor-3.1-flash-image', await shaped(180, 320), 768, 1376], // 9:16
      ['vendor-3.1-flash-image', await shaped(500, 480), 1024, 1024], // 1:1
      ['vendor-3-pro-image', await shaped(300, 700), 672, 1584], // 9:21
      ['vendor-3.1-flash-lite-image', await shaped(300, 700), 768, 1376], // no 9:21 on lite: 9:16 is nearest
      // Stored 320×180 but EXIF orientation 6: displayed 180×320.
      ['vendor-3.1-flash-image', await sharp({ create: { width: 320, height: 180, channels: 3, background: reference } }).jpeg().withMetadata({ orientation: 6 }).toBuffer(), 768, 1376],
    ];
    for (const [model, bytes, width, height] of cases) {
      const png = image(await sandbox.generate(request({ model, aspectRatio: undefined, references: [{ mimeType: 'image/png', bytes }] })));
      const metadata = await sharp(png).metadata();
      assert.deepEqual([metadata.width, metadata.height], [width, height], `${model} ${width}×${height}`);
    }
    // A named ratio wins over the reference's shape; a reference it cannot read gives 1:1.
    const wide = await shaped(320, 180);
    const square = image(await sandbox.generate(request({ aspectRatio: '1:1', references: [{ mimeType: 'image/png', bytes: wide }] })));
    assert.deepEqual([(await sharp(square).metadata()).width, (await sharp(square).metadata()).height], [1024, 1024]);
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(12), Buffer.from([0, 0, 0, 8]), Buffer.from('mdat')]);
    const fallback = image(await sandbox.generate(request({ aspectRatio: undefined, references: [{ mimeType: 'image/heic', bytes: heic }] })));
    assert.deepEqual([(await sharp(fallback).metadata()).width, (await sharp(fallback).metadata()).height], [1024, 1024]);
  });

  it('uses only the first reference', async () => {
    const blue = await sharp({ create: { width: 64, height: 64, channels: 3, background: reference } }).png().toBuffer();
    const red = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 250, g: 0, b: 0 } } }).png().toBuffer();
    const one = image(await sandbox.generate(request({ references: [{ mimeType: 'image/png', bytes: blue }] })));
    const two = image(await sandbox.generate(request({ references: [{ mimeType: 'image/png', bytes: blue }, { mimeType: 'image/png', bytes: red }] })));
    assert.ok(one.equals(two));
  });

  it('falls back to the prompt picture when the reference cannot be decoded (HEVC HEIC, corrupt bytes)', async () => {
    const promptPicture = image(await sandbox.generate(request()));
    // An HEIC brand box followed by no decodable picture: what an HEVC HEIC is to the prebuilt libvips.
    const heic = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypheic'), Buffer.alloc(12), Buffer.from([0, 0, 0, 8]), Buffer.from('mdat'), Buffer.alloc(64, 7)]);
    const corruptPng = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(40, 1)]);
    for (const [mimeType, bytes] of [['image/heic', heic], ['image/png', corruptPng]] as const) {
      const png = image(await sandbox.generate(request({ references: [{ mimeType, bytes }] })));
      assert.ok(png.equals(promptPicture), mimeType);
    }
  });

  it('draws from the references alone when there is no prompt', async () => {
    const bytes = await sharp({ create: { width: 50, height: 50, channels: 3, background: reference } }).png().toBuffer();
    const png = image(await sandbox.generate(request({ prompt: undefined, references: [{ mimeType: 'image/png', bytes }] })));
    const mean = await meanColour(png);
    const tint = promptPalette('').colours[0]!;
    assert.ok(Math.abs(mean.b - (0.75 * reference.b + 0.25 * tint.b)) < 4);
  });
});

describe('SandboxImageProvider: directives', () => {
  it('[sandbox:fail] fails the generation, not retryable', async () => {
    const outcome = await sandbox.generate(request({ prompt: 'a cat [sandbox:fail]' }));
    assert.equal(outcome.kind, 'failed');
    assert.equal((outcome as { retryable: boolean }).retryable, false);
  });

  it('[sandbox:safety] is a safety refusal', async () => {
    const outcome = await sandbox.generate(request({ prompt: '[sandbox:safety] a cat' }));
    assert.deepEqual({ kind: outcome.kind, category: (outcome as { category?: string }).category }, { kind: 'refused', category: 'safety' });
  });

  it('[sandbox:delay=…] waits, and an abort during the wait ends it as a retryable failure', async () => {
    const controller = new AbortController();
    const pending = sandbox.generate(request({ prompt: 'a cat [sandbox:delay=60000]', signal: controller.signal }));
    setImmediate(() => controller.abort());
    const outcome = await pending;
    assert.equal(outcome.kind, 'failed');
    assert.equal((outcome as { retryable: boolean }).retryable, true);
  });

  it('is the sandbox: credentialled, available, not live, serves every image model', () => {
    assert.equal(sandbox.name, 'sandbox');
    assert.equal(sandbox.live, false);
    assert.ok(sandbox.credentialled() && sandbox.available());
    assert.deepEqual([...sandbox.models], ['vendor-3-pro-image', 'vendor-3.1-flash-image', 'vendor-3.1-flash-lite-image']);
  });
});
