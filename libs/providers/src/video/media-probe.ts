/**
 * Small, dependency-free readers for what media validation needs: the image type from magic
 * bytes, and an MP4's duration from its `mvhd` box (no ffprobe in the shipped ffmpeg).
 */
export type ImageType = 'image/jpeg' | 'image/png' | 'image/webp';

export function sniffImage(bytes: Buffer): ImageType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return null;
}

/**
 * True when the file starts with an ISO-BMFF `ftyp` box (MP4 family) whose major brand is not
 * QuickTime's (`qt  `): a `.mov` shares the box structure but is not the MP4 the spec asks for.
 */
export function looksLikeMp4(bytes: Buffer): boolean {
  return bytes.length >= 12 && bytes.toString('latin1', 4, 8) === 'ftyp' && bytes.toString('latin1', 8, 12) !== 'qt  ';
}

interface Box {
  type: string;
  start: number;
  headerSize: number;
  end: number;
}

function* boxes(bytes: Buffer, from: number, to: number): Generator<Box> {
  let offset = from;
  while (offset + 8 <= to) {
    let size = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    let headerSize = 8;
    if (size === 1) {
      if (offset + 16 > to) return;
      const large = bytes.readBigUInt64BE(offset + 8);
      if (large > BigInt(Number.MAX_SAFE_INTEGER)) return;
      size = Number(large);
      headerSize = 16;
    } else if (size === 0) {
      size = to - offset;
    }
    if (size < headerSize || offset + size > to) {
      // A truncated last box: still report it so its header fields can be read.
      yield { type, start: offset, headerSize, end: to };
      return;
    }
    yield { type, start: offset, headerSize, end: offset + size };
    offset += size;
  }
}

/**
 * The movie duration in seconds from `moov/mvhd` (versions 0 and 1), or null when the file is
 * not an MP4 or has no readable movie header.
 */
export function mp4DurationSeconds(bytes: Buffer): number | null {
  if (!looksLikeMp4(bytes)) return null;
  for (const top of boxes(bytes, 0, bytes.length)) {
    if (top.type !== 'moov') continue;
    for (const child of boxes(bytes, top.start + top.headerSize, top.end)) {
      if (child.type !== 'mvhd') continue;
      const body = child.start + child.headerSize;
      if (body + 4 > child.end) return null;
      const version = bytes.readUInt8(body);
      if (version === 1) {
        if (body + 32 > child.end) return null;
        const timescale = bytes.readUInt32BE(body + 20);
        const duration = bytes.readBigUInt64BE(body + 24);
        return timescale > 0 ? Number(duration) / timescale : null;
      }
      if (body + 20 > child.end) return null;
      const timescale = bytes.readUInt32BE(body + 12);
      const duration = bytes.readUInt32BE(body + 16);
      return timescale > 0 ? duration / timescale : null;
    }
    return null;
  }
  return null;
}
