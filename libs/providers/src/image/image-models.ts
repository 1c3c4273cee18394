/**
 * What each image model accepts (spec › Image generation) and the Gemini model behind it. The
 * domain validates requests against these lists; the adapters trust them.
 */
import { IMAGE_ASPECT_RATIOS, type ImageAspectRatio, type ImageModelId, type ImageSizeName } from './image-provider.js';

export const IMAGE_MODEL_SIZES: Record<ImageModelId, readonly ImageSizeName[]> = {
  'vendor-3-pro-image': ['1K', '2K', '4K'],
  'vendor-3.1-flash-image': ['512', '1K', '2K', '4K'],
  'vendor-3.1-flash-lite-image': ['1K'],
};

/** `9:21` is offered by the pro and flash models only. */
export const IMAGE_MODEL_ASPECT_RATIOS: Record<ImageModelId, readonly ImageAspectRatio[]> = {
  'vendor-3-pro-image': IMAGE_ASPECT_RATIOS,
  'vendor-3.1-flash-image': IMAGE_ASPECT_RATIOS,
  'vendor-3.1-flash-lite-image': IMAGE_ASPECT_RATIOS.filter((ratio) => ratio !== '9:21'),
};

/** Public model id → Gemini model id (the `{model}` of `:generateContent`). */
export const GEMINI_IMAGE_MODELS: Record<ImageModelId, string> = {
  'vendor-3-pro-image': 'gemini-3-pro-image-preview',
  'vendor-3.1-flash-image': 'gemini-3.1-flash-image-preview',
  'vendor-3.1-flash-lite-image': 'gemini-3.1-flash-lite-image-preview',
};
