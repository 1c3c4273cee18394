/**
 * Reads an MP3 file frame by frame, for tests that check what a client would play: every byte
 * must belong to an MPEG audio frame (after an optional leading ID3v2 tag), each frame header is
 * decoded (ISO/IEC 11172-3 §2.4.2.3) and its length taken from its bitrate and sample rate.
 */
export interface Mp3Frame {
  offset: number;
  bytes: number;
  /** 1 for MPEG-1 (the only version this reader accepts the tables of). */
  mpegVersion: 1;
  layer: 3;
  bitrateKbps: number;
  sampleRate: number;
  channels: 1 | 2;
  /** Samples per channel in the frame: 1,152 for MPEG-1 Layer III. */
  samples: 1152;
}

/** MPEG-1 Layer III bitrates by index (0 = free format, 15 = forbidden). */
const BITRATES_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, -1];
/** MPEG-1 sample rates by index (3 = reserved). */
const SAMPLE_RATES = [44_100, 48_000, 32_000, -1];

/** Bytes of a leading ID3v2 tag (its size is a 28-bit "syncsafe" integer), 0 when there is none. */
function id3v2Bytes(file: Buffer): number {
  if (file.length < 10 || file.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = (file[6]! << 21) | (file[7]! << 14) | (file[8]! << 7) | file[9]!;
  return 10 + size + (file[5]! & 0x10 ? 10 : 0);
}

/** One frame header at `offset`; throws when the bytes there are not an MPEG-1 Layer III header. */
export function readMp3FrameHeader(file: Buffer, offset: number): Mp3Frame {
  if (offset + 4 > file.length) throw new Error(`truncated frame header at byte ${offset}`);
  const header = file.readUInt32BE(offset);
  if (header >>> 21 !== 0x7ff) throw new Error(`no frame sync at byte ${offset}`);
  if (((header >>> 19) & 0b11) !== 0b11) throw new Error(`not MPEG-1 at byte ${offset}`);
  if (((header >>> 17) & 0b11) !== 0b01) throw new Error(`not Layer III at byte ${offset}`);
  const bitrateKbps = BITRATES_KBPS[(header >>> 12) & 0xf]!;
  const sampleRate = SAMPLE_RATES[(header >>> 10) & 0b11]!;
  if (bitrateKbps <= 0) throw new Error(`free or forbidden bitrate at byte ${offset}`);
  if (sampleRate < 0) throw new Error(`reserved sample rate at byte ${offset}`);
  const padding = (header >>> 9) & 1;
  const channels = ((header >>> 6) & 0b11) === 0b11 ? 1 : 2;
  const bytes = Math.floor((144 * bitrateKbps * 1000) / sampleRate) + padding;
  return { offset, bytes, mpegVersion: 1, layer: 3, bitrateKbps, sampleRate, channels, samples: 1152 };
}

/** Every frame of the file, in order; throws unless the frames cover the file to its last byte. */
export function readMp3Frames(file: Buffer): Mp3Frame[] {
  const frames: Mp3Frame[] = [];
  let offset = id3v2Bytes(file);
  while (offset < file.length) {
    const frame = readMp3FrameHeader(file, offset);
    if (offset + frame.bytes > file.length) throw new Error(`the last frame (byte ${offset}) is cut short`);
    frames.push(frame);
    offset += frame.bytes;
  }
  return frames;
}
