import type { ReferenceImage } from '../../../libs/providers/index.js';

export type ReferenceMimeType = ReferenceImage['mimeType'];

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** ISO-BMFF brands of HEVC-coded HEIF images (image/heic) and of other HEIF images (image/heif). */
const HEIC_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx']);
const HEIF_BRANDS = new Set(['mif1', 'msf1', 'heif']);
const AVIF_BRANDS = new Set(['avif', 'avis']);

/**
 * The image type of a file from its first bytes, or null when it is none of the accepted five
 * (PNG, JPEG, WebP, HEIC, HEIF). The URL's extension and the server's Content-Type are not trusted.
 * HEIF files are ISO-BMFF: an `ftyp` box whose major brand (or, failing that, a compatible brand)
 * says HEVC (heic) or generic HEIF; AVIF (`avif` brand) is not among the accepted formats.
 */
export function sniffImageType(bytes: Buffer): ReferenceMimeType | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG)) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return sniffHeif(bytes);
}

function sniffHeif(bytes: Buffer): ReferenceMimeType | null {
  if (bytes.length < 16 || bytes.toString('latin1', 4, 8) !== 'ftyp') return null;
  const boxSize = Math.min(bytes.readUInt32BE(0), bytes.length, 256);
  const major = bytes.toString('latin1', 8, 12);
  // AVIF is HEIF-based (it lists mif1 too) but is not an accepted format.
  if (AVIF_BRANDS.has(major)) return null;
  const brands = [major];
  // After the major brand: a 4-byte minor version, then the compatible brands to the end of the box.
  for (let offset = 16; offset + 4 <= boxSize; offset += 4) brands.push(bytes.toString('latin1', offset, offset + 4));
  if (brands.some((brand) => HEIC_BRANDS.has(brand))) return 'image/heic';
  if (brands.some((brand) => HEIF_BRANDS.has(brand))) return 'image/heif';
  return null;
}
