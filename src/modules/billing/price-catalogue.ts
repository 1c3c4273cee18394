/**
 * The price list: every billable model of the spec, with its unit, in integer micro-USD.
 * Holds reserve the most an operation can cost under these prices; settlement charges the
 * measured usage under the same prices. Prices change here and nowhere else; callers reach them
 * through the injectable PriceCatalogue below.
 *
 * | capability     | unit                                   |
 * | -------------- | -------------------------------------- |
 * | video          | per second of output, by resolution    |
 * | alternate video| per second of output, by mode          |
 * | text           | per 1M input tokens, per 1M output tokens |
 * | speech/dialogue| per billable character                 |
 * | image          | per image, by size                     |
 */
import { ceilDiv } from '../../../libs/common/index.js';
// The model list's own file: the library's index would load every adapter (sharp, ffmpeg) for a price.
import { VIDEO_MODEL_IDS } from '../../../libs/providers/src/video/video-provider.js';

export const VIDEO_MODELS = VIDEO_MODEL_IDS;
export type VideoModel = (typeof VIDEO_MODELS)[number];
export type VideoResolution = '360p' | '720p' | '1080p' | '4k';

export const TEXT_MODELS = ['vendor-3.8-flash', 'vendor-3.7-flash', 'vendor-3.5-flash-lite'] as const;
export type TextModel = (typeof TEXT_MODELS)[number];

export const AUDIO_MODELS = ['voice_v3', 'voice_v4', 'voice_v4_turbo'] as const;
export type AudioModel = (typeof AUDIO_MODELS)[number];

export const IMAGE_MODELS = ['vendor-3-pro-image', 'vendor-3.1-flash-image', 'vendor-3.1-flash-lite-image'] as const;
export type ImageModel = (typeof IMAGE_MODELS)[number];
export type ImageSize = '512' | '1K' | '2K' | '4K';

export const ALTERNATE_VIDEO_MODELS = ['kling-v2-6', 'kling-v2-5-turbo'] as const;
export type AlternateVideoModel = (typeof ALTERNATE_VIDEO_MODELS)[number];
export type AlternateVideoMode = 'std' | 'pro';

interface VideoPrice {
  /** Micros per second of returned video, by resolution; a missing resolution is unsupported. */
  perSecond: Partial<Record<VideoResolution, bigint>>;
  /** The longest video the model can return, whatever was requested: what a hold covers. */
  maxOutputSeconds: number;
}

const VIDEO_PRICES: Record<VideoModel, VideoPrice> = {
  'vendor-omni-1.1-flash-preview': {
    perSecond: { '360p': 50_000n, '720p': 100_000n, '1080p': 150_000n, '4k': 300_000n },
    maxOutputSeconds: 10,
  },
  'vendor-omni-flash-preview': { perSecond: { '720p': 80_000n }, maxOutputSeconds: 10 },
};

interface TextPrice {
  inputPerMillionTokens: bigint;
  outputPerMillionTokens: bigint;
  /** Output cap used when the request sets none (the hold covers it in full). */
  maxOutputTokens: number;
}

const TEXT_PRICES: Record<TextModel, TextPrice> = {
  'vendor-3.8-flash': { inputPerMillionTokens: 500_000n, outputPerMillionTokens: 3_000_000n, maxOutputTokens: 65_536 },
  'vendor-3.7-flash': { inputPerMillionTokens: 300_000n, outputPerMillionTokens: 2_500_000n, maxOutputTokens: 65_536 },
  'vendor-3.5-flash-lite': { inputPerMillionTokens: 100_000n, outputPerMillionTokens: 400_000n, maxOutputTokens: 65_536 },
};

/** Micros per billable character. */
const AUDIO_PRICES: Record<AudioModel, { perCharacter: bigint }> = {
  voice_v3: { perCharacter: 300n },
  voice_v4: { perCharacter: 240n },
  voice_v4_turbo: { perCharacter: 120n },
};

/** Micros per image; a missing size is unsupported by the model. */
const IMAGE_PRICES: Record<ImageModel, Partial<Record<ImageSize, bigint>>> = {
  'vendor-3-pro-image': { '1K': 134_000n, '2K': 134_000n, '4K': 240_000n },
  'vendor-3.1-flash-image': { '512': 30_000n, '1K': 39_000n, '2K': 60_000n, '4K': 120_000n },
  'vendor-3.1-flash-lite-image': { '1K': 20_000n },
};

/** Micros per second of output, by mode; durations are 5 or 10 seconds. */
const ALTERNATE_VIDEO_PRICES: Record<AlternateVideoModel, Record<AlternateVideoMode, bigint>> = {
  'kling-v2-6': { std: 70_000n, pro: 140_000n },
  'kling-v2-5-turbo': { std: 42_000n, pro: 70_000n },
};

/**
 * Who is being priced: the workspace, the key and its environment of the request (the same
 * facts the hold records), so that an override can price one workspace or key differently.
 */
export interface PriceContext {
  workspaceId: string;
  apiKeyId: string;
  environment: 'live' | 'test';
}

/**
 * The prices every hold and charge is computed with, as a DI service (an abstract class token).
 * Each method takes the context, the model and the measured units, and returns integer micros.
 * The default is StaticPriceCatalogue (the tables above); an extension replaces it app-wide by
 * providing PRICE_CATALOGUE_OVERRIDE from a global module (docs/extending.md › Override prices).
 */
export abstract class PriceCatalogue {
  abstract videoCost(context: PriceContext, model: VideoModel, resolution: VideoResolution, seconds: number): bigint;
  /** The longest video the model can return, whatever was requested: what a hold covers. */
  abstract videoMaxOutputSeconds(model: VideoModel): number;
  abstract textCost(context: PriceContext, model: TextModel, inputTokens: number, outputTokens: number): bigint;
  abstract speechCost(context: PriceContext, model: AudioModel, billableCharacters: number): bigint;
  abstract imageCost(context: PriceContext, model: ImageModel, size: ImageSize, images?: number): bigint;
  abstract alternateVideoCost(context: PriceContext, model: AlternateVideoModel, mode: AlternateVideoMode, seconds: number): bigint;

  /** The hold of a video task: its longest output at this catalogue's own video price. */
  videoMaxCost(context: PriceContext, model: VideoModel, resolution: VideoResolution): bigint {
    return this.videoCost(context, model, resolution, this.videoMaxOutputSeconds(model));
  }
}

/** Provide this token (from a @Global() module) to replace the default catalogue. */
export const PRICE_CATALOGUE_OVERRIDE = Symbol('PRICE_CATALOGUE_OVERRIDE');

/** The price list above, the same for every workspace: the default PriceCatalogue. */
export class StaticPriceCatalogue extends PriceCatalogue {
  videoCost(_context: PriceContext, model: VideoModel, resolution: VideoResolution, seconds: number): bigint {
    const rate = VIDEO_PRICES[model].perSecond[resolution];
    if (rate === undefined) throw new RangeError(`${model} has no price at ${resolution}`);
    // Fractional seconds are billed by the millisecond, rounded up.
    return ceilDiv(rate * BigInt(Math.ceil(seconds * 1000)), 1000n);
  }

  videoMaxOutputSeconds(model: VideoModel): number {
    return VIDEO_PRICES[model].maxOutputSeconds;
  }

  textCost(_context: PriceContext, model: TextModel, inputTokens: number, outputTokens: number): bigint {
    const price = TEXT_PRICES[model];
    return ceilDiv(BigInt(inputTokens) * price.inputPerMillionTokens + BigInt(outputTokens) * price.outputPerMillionTokens, 1_000_000n);
  }

  speechCost(_context: PriceContext, model: AudioModel, billableCharacters: number): bigint {
    return AUDIO_PRICES[model].perCharacter * BigInt(billableCharacters);
  }

  imageCost(_context: PriceContext, model: ImageModel, size: ImageSize, images = 1): bigint {
    const price = IMAGE_PRICES[model][size];
    if (price === undefined) throw new RangeError(`${model} has no price at ${size}`);
    return price * BigInt(images);
  }

  alternateVideoCost(_context: PriceContext, model: AlternateVideoModel, mode: AlternateVideoMode, seconds: number): bigint {
    return ALTERNATE_VIDEO_PRICES[model][mode] * BigInt(Math.ceil(seconds));
  }
}
