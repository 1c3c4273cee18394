/**
 * The sandbox's pictures (real PNGs, deterministic): a prompt picture (a two-colour gradient
 * with a few shapes, all taken from a hash of the prompt) and an edit picture (the reference
 * image resized to cover the frame and tinted a quarter of the way toward the prompt's colour,
 * so a user sees the reference was used). Drawing happens at a small working size and is then
 * resized, which bounds the cost of rasterising; sharp does the work off the event loop.
 */
import { createHash } from 'node:crypto';
import type { Sharp, SharpOptions } from 'sharp';
import { nearestAspectRatio, type PixelSize } from './image-dimensions.js';
import type { ImageAspectRatio } from './image-provider.js';

/** Longest side of the rasterised SVG before it is scaled to the requested size. */
const WORKING_SIDE = 512;
/** A reference larger than this (pixels) is not decoded (a 16K×16K image would cost 1 GB). */
/** sharp (libvips) is loaded on the first picture: a process that never draws one saves ~20 MB. */
async function sharp(input?: Buffer, options?: SharpOptions): Promise<Sharp> {
  const { default: load } = await import('sharp');
  return load(input, options);
}

export const MAX_REFERENCE_PIXELS = 50_000_000;
/** How far an edit is tinted toward the prompt's colour. */
const TINT_OPACITY = 0.25;

export interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** HSL (hue in degrees, saturation and lightness 0–1) → RGB 0–255. */
function hsl(hue: number, saturation: number, lightness: number): Rgb {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const x = chroma * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = lightness - chroma / 2;
  const [r, g, b] = hue < 60 ? [chroma, x, 0] : hue < 120 ? [x, chroma, 0] : hue < 180 ? [0, chroma, x] : hue < 240 ? [0, x, chroma] : hue < 300 ? [x, 0, chroma] : [chroma, 0, x];
  return { r: Math.round((r + m) * 255), g: Math.round((g + m) * 255), b: Math.round((b + m) * 255) };
}

const css = ({ r, g, b }: Rgb) => `rgb(${r},${g},${b})`;

/** The prompt's palette: its first colour is also the tint of edits. */
export function promptPalette(prompt: string): { digest: Buffer; colours: Rgb[] } {
  const digest = createHash('sha256').update(prompt, 'utf8').digest();
  const colours = [0, 1, 2, 3].map((i) => hsl((digest.readUInt16BE(i * 2) % 360), 0.55 + (digest[8 + i]! % 40) / 100, 0.35 + (digest[12 + i]! % 30) / 100));
  return { digest, colours };
}

function promptSvg(prompt: string, width: number, height: number): string {
  const { digest, colours } = promptPalette(prompt);
  const shapes: string[] = [];
  for (let i = 0; i < 5; i++) {
    const byte = (k: number) => digest[16 + ((i * 3 + k) % 16)]!;
    const cx = Math.round((byte(0) / 255) * width);
    const cy = Math.round((byte(1) / 255) * height);
    const extent = Math.round(((byte(2) % 40) / 100 + 0.1) * Math.min(width, height));
    const fill = css(colours[(i % 3) + 1]!);
    shapes.push(
      i % 2 === 0
        ? `<circle cx="${cx}" cy="${cy}" r="${extent}" fill="${fill}" fill-opacity="0.8"/>`
        : `<rect x="${cx - extent}" y="${cy - extent}" width="${2 * extent}" height="${2 * extent}" fill="${fill}" fill-opacity="0.8" transform="rotate(${byte(2) % 90} ${cx} ${cy})"/>`,
    );
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${css(colours[0]!)}"/><stop offset="1" stop-color="${css(colours[1]!)}"/></linearGradient></defs>` +
    `<rect width="100%" height="100%" fill="url(#g)"/>${shapes.join('')}</svg>`
  );
}

/** A PNG of exactly `size`, drawn from the prompt. */
export async function drawPromptPicture(prompt: string, size: PixelSize): Promise<Buffer> {
  const scale = WORKING_SIDE / Math.max(size.width, size.height);
  const working = { width: Math.max(1, Math.round(size.width * scale)), height: Math.max(1, Math.round(size.height * scale)) };
  return (await sharp(Buffer.from(promptSvg(prompt, working.width, working.height))))
    .resize(size.width, size.height, { fit: 'fill' })
    .removeAlpha()
    .png()
    .toBuffer();
}

/**
 * A PNG of exactly `size` derived from `reference`; throws when sharp cannot decode it (HEVC
 * HEIC with the prebuilt libvips, a corrupt file, a picture over MAX_REFERENCE_PIXELS).
 */
export async function drawEditPicture(reference: Buffer, prompt: string, size: PixelSize): Promise<Buffer> {
  const tint = promptPalette(prompt).colours[0]!;
  // Decoded once to a flat RGB bitmap: composite then works on a known channel layout.
  const resized = await (await sharp(reference, { limitInputPixels: MAX_REFERENCE_PIXELS, failOn: 'error' }))
    .rotate()
    .resize(size.width, size.height, { fit: 'cover' })
    .flatten({ background: '#ffffff' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return (await sharp(resized.data, { raw: { width: resized.info.width, height: resized.info.height, channels: resized.info.channels } }))
    .composite([{ input: { create: { width: size.width, height: size.height, channels: 4, background: { ...tint, alpha: TINT_OPACITY } } } }])
    .removeAlpha()
    .png()
    .toBuffer();
}

/**
 * The ratio of `allowed` nearest the reference's shape as displayed (EXIF orientations 5 to 8 turn
 * it on its side), read from its header only; 1:1 when sharp cannot read it (e.g. HEVC HEIC).
 */
export async function referenceAspectRatio(reference: Buffer, allowed: readonly ImageAspectRatio[]): Promise<ImageAspectRatio> {
  try {
    const { width, height, orientation } = await (await sharp(reference, { limitInputPixels: MAX_REFERENCE_PIXELS })).metadata();
    if (!width || !height) return '1:1';
    return (orientation ?? 1) >= 5 ? nearestAspectRatio(height, width, allowed) : nearestAspectRatio(width, height, allowed);
  } catch {
    return '1:1';
  }
}
