/**
 * MP3 from the sandbox's PCM: the bundled ffmpeg (libmp3lame) reads 24 kHz 16-bit mono PCM on
 * stdin and writes MPEG-1 Layer III, 44.1 kHz, 128 kbps CBR, mono on stdout, frame by frame as it
 * encodes them (`-flush_packets 1`), so a stream's first chunk leaves after a few frames. No ID3
 * tag and no Xing frame: the output is nothing but audio frames, like the upstream's stream.
 */
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PCM_SAMPLE_RATE } from './sandbox-speech.js';

/** The last stderr bytes kept for the error message (ffmpeg may write without end). */
const STDERR_TAIL_BYTES = 4_096;
const PCM_READ_AHEAD_BYTES = 256 * 1024;

export class Mp3EncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Mp3EncodingError';
  }
}

const ARGS = [
  '-hide_banner', '-loglevel', 'error', '-nostdin',
  '-f', 's16le', '-ar', String(PCM_SAMPLE_RATE), '-ac', '1', '-i', 'pipe:0',
  '-map_metadata', '-1', '-ar', '44100', '-ac', '1',
  // compression_level 9: LAME's fastest search; a sandbox needs speed more than fidelity.
  '-c:a', 'libmp3lame', '-b:a', '128k', '-compression_level', '9',
  '-id3v2_version', '0', '-write_xing', '0', '-flush_packets', '1',
  '-f', 'mp3', 'pipe:1',
];

/**
 * Encodes PCM blocks to MP3 chunks, as ffmpeg produces them. Reading stops the PCM source when
 * ffmpeg's pipe is full (backpressure); ffmpeg is killed after `timeoutMs`, or as soon as the
 * consumer stops reading early. Throws Mp3EncodingError when ffmpeg fails or times out.
 */
export async function* encodeMp3(ffmpegPath: string, pcm: AsyncIterable<Buffer>, timeoutMs: number): AsyncGenerator<Buffer> {
  const child = spawn(ffmpegPath, ARGS, { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<string | null>((resolve) => {
    child.once('error', (error) => resolve(`ffmpeg did not start: ${error.message}`));
    child.once('close', (code, signal) => resolve(code === 0 ? null : `ffmpeg exited with ${code ?? signal}`));
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  // Reads up to ~5 s of PCM ahead of ffmpeg, so the encoder rarely waits on the generator.
  const source = Readable.from(pcm, { objectMode: false, highWaterMark: PCM_READ_AHEAD_BYTES });
  // ffmpeg closing its stdin early (it failed, or we killed it) surfaces as its exit status below.
  const feeding = pipeline(source, child.stdin).catch(() => undefined);
  try {
    try {
      for await (const chunk of child.stdout) yield chunk as Buffer;
    } catch {
      // The pipe broke: ffmpeg's exit status says why.
    }
    const failure = await exited;
    if (timedOut) throw new Mp3EncodingError(`ffmpeg took longer than ${timeoutMs} ms`);
    if (failure) throw new Mp3EncodingError(`${failure}: ${stderr.trim().slice(0, 500)}`);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    source.destroy();
    await feeding;
  }
}

/** The whole MP3 in one buffer. */
export async function encodeMp3Whole(ffmpegPath: string, pcm: AsyncIterable<Buffer>, timeoutMs: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of encodeMp3(ffmpegPath, pcm, timeoutMs)) chunks.push(chunk);
  return Buffer.concat(chunks);
}
