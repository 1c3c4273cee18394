/**
 * The pixel size of an image for a size name and an aspect ratio, as the Gemini image models
 * return it (their published resolution tables): `1K` is the base row below, `512` is half of it,
 * `2K` twice and `4K` four times (e.g. 16:9 → 688×384, 1376×768, 2752×1536, 5504×3072).
 * `9:21` is not in the upstream's table; it is `21:9` turned on its side.
 */
import type { ImageAspectRatio, ImageSizeName } from './image-provider.js';

/** Width × height at `1K`. */
const AT_1K: Record<ImageAspectRatio, readonly [number, number]> = {
  '1:1': [1024, 1024],
  '2:3': [848, 1264],
  '3:2': [1264, 848],
  '3:4': [896, 1200],
  '4:3': [1200, 896],
  '4:5': [928, 1152],
  '5:4': [1152, 928],
  '9:16': [768, 1376],
  '16:9': [1376, 768],
  '21:9': [1584, 672],
  '9:21': [672, 1584],
  '1:4': [512, 2048],
  '4:1': [2048, 512],
  '1:8': [384, 3072],
  '8:1': [3072, 384],
};

const SCALE: Record<ImageSizeName, number> = { '512': 0.5, '1K': 1, '2K': 2, '4K': 4 };

export interface PixelSize {
  width: number;
  height: number;
}

/** The ratio of `allowed` closest to `width`×`height` (by the logarithm of the ratios, so 2:1 and 1:2 are as far from 1:1). */
export function nearestAspectRatio(width: number, height: number, allowed: readonly ImageAspectRatio[]): ImageAspectRatio {
  const target = Math.log(width / height);
  let best = allowed[0]!;
  let bestDistance = Infinity;
  for (const ratio of allowed) {
    const [w, h] = AT_1K[ratio];
    const distance = Math.abs(Math.log(w / h) - target);
    if (distance < bestDistance) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best;
}

export function imagePixelSize(size: ImageSizeName, aspectRatio: ImageAspectRatio): PixelSize {
  const [width, height] = AT_1K[aspectRatio];
  const scale = SCALE[size];
  return { width: Math.round(width * scale), height: Math.round(height * scale) };
}
