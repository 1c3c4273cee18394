import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AlternateVideoMode,
  type AlternateVideoModel,
  type AudioModel,
  type ImageModel,
  type ImageSize,
  type PriceContext,
  StaticPriceCatalogue,
  type TextModel,
  type VideoModel,
  type VideoResolution,
} from './price-catalogue.js';

// The default catalogue's methods with the payer fixed: the static list prices everyone alike.
const list = new StaticPriceCatalogue();
const anyone: PriceContext = { workspaceId: 'any-workspace', apiKeyId: 'any-key', environment: 'live' };
const videoCost = (model: VideoModel, resolution: VideoResolution, seconds: number) => list.videoCost(anyone, model, resolution, seconds);
const videoMaxCost = (model: VideoModel, resolution: VideoResolution) => list.videoMaxCost(anyone, model, resolution);
const textCost = (model: TextModel, inputTokens: number, outputTokens: number) => list.textCost(anyone, model, inputTokens, outputTokens);
const speechCost = (model: AudioModel, characters: number) => list.speechCost(anyone, model, characters);
const imageCost = (model: ImageModel, size: ImageSize, images?: number) => list.imageCost(anyone, model, size, images);
const alternateVideoCost = (model: AlternateVideoModel, mode: AlternateVideoMode, seconds: number) => list.alternateVideoCost(anyone, model, mode, seconds);

/**
 * The price list against literal figures (micro-USD), written by hand from the catalogue's
 * table, not computed with its own functions: a changed price or rounding rule fails here.
 */
describe('price catalogue (literal figures)', () => {
  it('video: per second of output, by resolution, billed by the millisecond rounded up', () => {
    const cases: Array<[Parameters<typeof videoCost>, bigint]> = [
      [['vendor-omni-1.1-flash-preview', '720p', 5], 500_000n],
      [['vendor-omni-1.1-flash-preview', '360p', 3], 150_000n],
      [['vendor-omni-1.1-flash-preview', '1080p', 10], 1_500_000n],
      [['vendor-omni-1.1-flash-preview', '4k', 10], 3_000_000n],
      [['vendor-omni-flash-preview', '720p', 5], 400_000n],
      [['vendor-omni-1.1-flash-preview', '720p', 5.0004], 500_100n],
      [['vendor-omni-1.1-flash-preview', '720p', 0.0001], 100n],
    ];
    for (const [args, micros] of cases) assert.equal(videoCost(...args), micros, args.join(' '));
    assert.equal(videoMaxCost('vendor-omni-1.1-flash-preview', '720p'), 1_000_000n);
    assert.equal(videoMaxCost('vendor-omni-1.1-flash-preview', '4k'), 3_000_000n);
    assert.equal(videoMaxCost('vendor-omni-flash-preview', '720p'), 800_000n);
    assert.throws(() => videoCost('vendor-omni-flash-preview', '1080p', 5), RangeError);
  });

  it('text: per million input and output tokens, rounded up to the micro', () => {
    const cases: Array<[Parameters<typeof textCost>, bigint]> = [
      [['vendor-3.8-flash', 1_000_000, 0], 500_000n],
      [['vendor-3.8-flash', 0, 1_000_000], 3_000_000n],
      [['vendor-3.8-flash', 1_000, 500], 2_000n],
      [['vendor-3.8-flash', 1, 0], 1n],
      [['vendor-3.7-flash', 1_000_000, 1_000_000], 2_800_000n],
      [['vendor-3.5-flash-lite', 10_000, 10_000], 5_000n],
      [['vendor-3.5-flash-lite', 0, 0], 0n],
    ];
    for (const [args, micros] of cases) assert.equal(textCost(...args), micros, args.join(' '));
  });

  it('speech and dialogue: per billable character', () => {
    assert.equal(speechCost('voice_v3', 1_000), 300_000n);
    assert.equal(speechCost('voice_v4', 2_000), 480_000n);
    assert.equal(speechCost('voice_v4_turbo', 2_000), 240_000n);
    assert.equal(speechCost('voice_v4_turbo', 0), 0n);
  });

  it('images: per image, by size; a size the model lacks has no price', () => {
    assert.equal(imageCost('vendor-3-pro-image', '1K'), 134_000n);
    assert.equal(imageCost('vendor-3-pro-image', '4K'), 240_000n);
    assert.equal(imageCost('vendor-3.1-flash-image', '512'), 30_000n);
    assert.equal(imageCost('vendor-3.1-flash-image', '2K'), 60_000n);
    assert.equal(imageCost('vendor-3.1-flash-lite-image', '1K', 2), 40_000n);
    assert.throws(() => imageCost('vendor-3.1-flash-lite-image', '2K'), RangeError);
    assert.throws(() => imageCost('vendor-3-pro-image', '512'), RangeError);
  });

  it('alternate video: per started second, by mode', () => {
    assert.equal(alternateVideoCost('kling-v2-6', 'std', 5), 350_000n);
    assert.equal(alternateVideoCost('kling-v2-6', 'pro', 10), 1_400_000n);
    assert.equal(alternateVideoCost('kling-v2-5-turbo', 'std', 4.2), 210_000n);
    assert.equal(alternateVideoCost('kling-v2-5-turbo', 'pro', 10), 700_000n);
  });
});
