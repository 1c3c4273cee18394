import type { AudioOutputFormat } from '../../../libs/providers/index.js';

/** Bytes per second of each output format: PCM 16-bit mono at 24 kHz; MP3 at a constant 128 kbps. */
const BYTES_PER_SECOND: Record<AudioOutputFormat, number> = {
  pcm_24000: 2 * 24_000,
  mp3_44100_128: 128_000 / 8,
};

/**
 * Seconds of audio in a file of the format: exact for PCM, for MP3 the CBR estimate (within a
 * frame plus the container's tags). Informational only: billing is per character.
 */
export function audioSeconds(format: AudioOutputFormat, bytes: number): number {
  return Math.round((bytes / BYTES_PER_SECOND[format]) * 1000) / 1000;
}

/** Bytes of `seconds` of audio in the format (MP3: the CBR rate; tags and padding are within a frame or two). */
export function audioBytesFor(format: AudioOutputFormat, seconds: number): number {
  return Math.ceil(BYTES_PER_SECOND[format] * seconds);
}

export const AUDIO_FILE_EXTENSIONS: Record<AudioOutputFormat, string> = { mp3_44100_128: 'mp3', pcm_24000: 'pcm' };
