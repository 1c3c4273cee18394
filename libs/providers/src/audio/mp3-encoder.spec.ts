import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readMp3Frames } from '../../../../test/support/mp3-frames.js';
import { bundledFfmpegPath } from '../sandbox/bundled-ffmpeg.js';
import type { SpeechJobSpec, SpeechStream } from './audio-provider.js';
import { encodeMp3, encodeMp3Whole, Mp3EncodingError } from './mp3-encoder.js';
import { SandboxAudioProvider } from './sandbox-audio.provider.js';
import { pcmBlocks, planSpeech } from './sandbox-speech.js';
import { SANDBOX_VOICES } from './sandbox-voices.js';

const ffmpeg = bundledFfmpegPath()!;
const VOICE = SANDBOX_VOICES[0]!.id;
const speech = (text: string) => pcmBlocks(planSpeech([{ text, voiceId: VOICE }]));

/** Stand-ins for a broken encoder: shell scripts that take ffmpeg's place. */
let dir: string;
const fakes = {
  /** Writes 1,000 bytes, then fails. */
  breaks: '#!/bin/sh\nhead -c 1000 /dev/zero\necho "encoder exploded" >&2\nexit 3\n',
  /** Never answers. */
  hangs: '#!/bin/sh\nexec sleep 600\n',
  /** Floods stderr (20 MB), then fails. */
  chatty: '#!/bin/sh\nhead -c 20000000 /dev/zero | tr "\\0" "x" >&2\nexit 1\n',
};
const fake = (name: keyof typeof fakes) => join(dir, name);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fake-ffmpeg-'));
  for (const [name, script] of Object.entries(fakes)) {
    await writeFile(join(dir, name), script);
    await chmod(join(dir, name), 0o755);
  }
});
after(() => rm(dir, { recursive: true, force: true }));

describe('MP3 encoder', () => {
  it('encodes PCM to MPEG-1 Layer III, 44.1 kHz, 128 kbps, mono, in several chunks', async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of encodeMp3(ffmpeg, speech('Several chunks of audio, please.'), 30_000)) chunks.push(chunk);
    assert.ok(chunks.length > 1);
    const frames = readMp3Frames(Buffer.concat(chunks));
    assert.ok(frames.length > 50);
    assert.ok(frames.every((frame) => frame.sampleRate === 44_100 && frame.bitrateKbps === 128 && frame.channels === 1));
  });

  it('fails with the end of stderr when the encoder fails, even after some output', async () => {
    await assert.rejects(encodeMp3Whole(fake('breaks'), speech('Hello'), 30_000), (error: Error) => {
      assert.ok(error instanceof Mp3EncodingError);
      assert.match(error.message, /exited with 3: encoder exploded/);
      return true;
    });
  });

  it('keeps only the last 4 KB of stderr however much the encoder writes', async () => {
    await assert.rejects(encodeMp3Whole(fake('chatty'), speech('Hello'), 60_000), (error: Error) => {
      assert.ok(error instanceof Mp3EncodingError);
      assert.ok(error.message.length < 1000, `${error.message.length} characters`);
      return true;
    });
  });

  it('kills an encoder that takes longer than its time limit', async () => {
    await assert.rejects(encodeMp3Whole(fake('hangs'), speech('Hello'), 200), /took longer than 200 ms/);
  });

  it('fails when the binary does not start', async () => {
    await assert.rejects(encodeMp3Whole(join(dir, 'missing'), speech('Hello'), 30_000), /ffmpeg did not start/);
  });
});

describe('sandbox audio with a broken encoder', () => {
  const job = (text: string): SpeechJobSpec => ({
    taskId: 'audio:00000000-0000-4000-8000-000000000001',
    model: 'voice_v4',
    mode: 'text_to_speech',
    inputs: [{ text, voiceId: VOICE }],
    outputFormat: 'mp3_44100_128',
  });

  it('synthesize: rejected and retryable (nothing was generated); recover: unknown, try again later', async () => {
    const broken = new SandboxAudioProvider({ ffmpegPath: fake('breaks') });
    const outcome = await broken.synthesize(job('Hello'));
    assert.equal(outcome.kind, 'rejected');
    assert.equal((outcome as { retryable: boolean }).retryable, true);
    assert.deepEqual(await broken.recover(job('Hello'), new Date()), { kind: 'unknown', retryAfterMs: broken.reconcileDelayMs });
  });

  it('stream: the chunks already made arrive, then SpeechStreamError, and no billed count', async () => {
    const broken = new SandboxAudioProvider({ ffmpegPath: fake('breaks') });
    const outcome = await broken.stream(job('Hello'));
    assert.equal(outcome.kind, 'streaming');
    const stream = (outcome as { stream: SpeechStream }).stream;
    let received = 0;
    await assert.rejects(
      (async () => {
        for await (const chunk of stream.chunks) received += chunk.length;
      })(),
      { name: 'SpeechStreamError' },
    );
    assert.equal(received, 1000);
    assert.equal(stream.billableCharacters(), undefined);
  });
});
