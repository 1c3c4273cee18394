import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readMp3Frames } from '../../../../test/support/mp3-frames.js';
import { bundledFfmpegPath } from '../sandbox/bundled-ffmpeg.js';
import type { AudioOutputFormat, SpeechInput, SpeechJobSpec, SpeechStream, StreamOutcome, SynthesisOutcome } from './audio-provider.js';
import { MAX_SANDBOX_AUDIO_CHARACTERS, SandboxAudioProvider } from './sandbox-audio.provider.js';
import { isUsableVoice } from './sandbox-voice-catalogue.js';
import { PCM_SAMPLE_RATE, voicePitchHz } from './sandbox-speech.js';
import { SANDBOX_VOICES } from './sandbox-voices.js';

const ffmpegPath = bundledFfmpegPath();
assert.ok(ffmpegPath, 'the bundled ffmpeg is installed');
const sandbox = new SandboxAudioProvider({ ffmpegPath });
const usable = SANDBOX_VOICES.filter(isUsableVoice);
const VOICE = usable[0]!.id;
const OTHER_VOICE = usable.find((voice) => Math.abs(voicePitchHz(voice.id) / voicePitchHz(VOICE) - 1) > 0.25)!.id;
const NOT_TURBO = usable.find((voice) => !voice.models.includes('voice_v4_turbo'))!.id;
const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const LONG_TEXT = 'Streaming speech arrives while it is made. '.repeat(47).slice(0, 2000);

let tasks = 0;
function spec(inputs: SpeechInput[] | string, outputFormat: AudioOutputFormat = 'pcm_24000', extra: Partial<SpeechJobSpec> = {}): SpeechJobSpec {
  const lines = typeof inputs === 'string' ? [{ text: inputs, voiceId: VOICE }] : inputs;
  return {
    taskId: `audio:00000000-0000-4000-8000-${String(++tasks).padStart(12, '0')}`,
    model: 'voice_v4',
    mode: lines.length > 1 ? 'text_to_dialogue' : 'text_to_speech',
    inputs: lines,
    outputFormat,
    ...extra,
  };
}

function succeeded(outcome: SynthesisOutcome): { audio: Buffer; billableCharacters: number } {
  assert.equal(outcome.kind, 'succeeded', JSON.stringify(outcome));
  return outcome as { audio: Buffer; billableCharacters: number };
}

function streaming(outcome: StreamOutcome): SpeechStream {
  assert.equal(outcome.kind, 'streaming', JSON.stringify(outcome));
  return (outcome as { stream: SpeechStream }).stream;
}

async function drain(stream: SpeechStream): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream.chunks) chunks.push(chunk);
  return chunks;
}

/**
 * The MP3 must be MPEG-1 Layer III, 44.1 kHz, 128 kbps in every frame, and last as long as the
 * PCM: the encoder adds its delay (576 samples) and the decoder's (529) before the audio and pads
 * the last frame, so frames × 1,152 exceeds the 44.1 kHz sample count by 0 to 2,303 samples (one
 * character, 1/15 s, is 2,940 samples: a wrong length cannot hide in that tolerance).
 */
function assertMp3Lasts(mp3: Buffer, pcmSamples: number): void {
  const frames = readMp3Frames(mp3);
  for (const frame of frames) {
    assert.equal(frame.sampleRate, 44_100, `frame at ${frame.offset}`);
    assert.equal(frame.bitrateKbps, 128, `frame at ${frame.offset}`);
  }
  const samples44 = Math.ceil((pcmSamples * 44_100) / PCM_SAMPLE_RATE);
  const padding = frames.length * 1152 - samples44;
  assert.ok(padding >= 0 && padding < 2 * 1152, `${frames.length} frames for ${samples44} samples (padding ${padding})`);
}

describe('sandbox audio: synthesize', () => {
  it('pcm_24000: 16-bit mono PCM, 2 × 24,000 bytes a second of speech, billed by characters', async () => {
    const result = succeeded(await sandbox.synthesize(spec(SENTENCE)));
    assert.equal(result.audio.length, (2 * PCM_SAMPLE_RATE * SENTENCE.length) / 15);
    assert.equal(result.billableCharacters, SENTENCE.length);
  });

  it('mp3_44100_128: a real MP3 of the same length, frame by frame', async () => {
    const result = succeeded(await sandbox.synthesize(spec(SENTENCE, 'mp3_44100_128')));
    assert.equal(result.billableCharacters, SENTENCE.length);
    assertMp3Lasts(result.audio, (PCM_SAMPLE_RATE * SENTENCE.length) / 15);
    assert.equal(readMp3Frames(result.audio)[0]!.offset, 0, 'no ID3 tag: frames from the first byte');
  });

  it('the longest request (2,000 characters, 133 s) in both formats', async () => {
    const pcm = succeeded(await sandbox.synthesize(spec(LONG_TEXT)));
    assert.equal(pcm.audio.length, 2 * PCM_SAMPLE_RATE * (2000 / 15));
    assert.equal(pcm.billableCharacters, 2000);
    assertMp3Lasts(succeeded(await sandbox.synthesize(spec(LONG_TEXT, 'mp3_44100_128'))).audio, PCM_SAMPLE_RATE * (2000 / 15));
  });

  it('dialogue: the lines in order with 0.3 s between them, in both formats', async () => {
    const lines = [
      { text: SENTENCE, voiceId: VOICE },
      { text: 'Really?', voiceId: OTHER_VOICE },
    ];
    const seconds = SENTENCE.length / 15 + 0.5 + 0.3;
    const pcm = succeeded(await sandbox.synthesize(spec(lines)));
    assert.equal(pcm.audio.length, Math.round(2 * PCM_SAMPLE_RATE * seconds));
    assert.equal(pcm.billableCharacters, SENTENCE.length + 'Really?'.length);
    assertMp3Lasts(succeeded(await sandbox.synthesize(spec(lines, 'mp3_44100_128'))).audio, Math.round(PCM_SAMPLE_RATE * seconds));
  });

  it('is deterministic: the same spec gives the same bytes (a re-run stores the same file)', async () => {
    for (const format of ['pcm_24000', 'mp3_44100_128'] as const) {
      const once = succeeded(await sandbox.synthesize(spec(SENTENCE, format))).audio;
      assert.deepEqual(succeeded(await sandbox.synthesize(spec(SENTENCE, format))).audio, once, format);
    }
  });

  it('counts each generation request per task', async () => {
    const job = spec('Counted.');
    await sandbox.synthesize(job);
    await sandbox.synthesize(job);
    assert.equal(sandbox.submissions.get(job.taskId), 2);
  });
});

describe('sandbox audio: what the upstream refuses', () => {
  const cases: Array<[string, SpeechJobSpec]> = [
    ['an unknown voice', spec([{ text: 'Hi', voiceId: 'AAAAAAAAAAAAAAAAAAAA' }])],
    ...SANDBOX_VOICES.filter((voice) => !isUsableVoice(voice)).map((voice): [string, SpeechJobSpec] => [`a refused voice (${voice.status}, standard rate ${voice.standardRate})`, spec([{ text: 'Hi', voiceId: voice.id }])]),
    ['a voice that does not speak the model', spec([{ text: 'Hi', voiceId: NOT_TURBO }], 'pcm_24000', { model: 'voice_v4_turbo' })],
    ['dialogue on voice_v4_turbo', spec([{ text: 'Hi', voiceId: VOICE }, { text: 'Yo', voiceId: OTHER_VOICE }], 'pcm_24000', { model: 'voice_v4_turbo' })],
    ['text_to_speech with two inputs', spec([{ text: 'Hi', voiceId: VOICE }, { text: 'Yo', voiceId: VOICE }], 'pcm_24000', { mode: 'text_to_speech' })],
    ['a dialogue of eleven distinct voices', spec(usable.slice(0, 11).map((voice) => ({ text: 'Hi', voiceId: voice.id })))],
    ['no input at all', spec([], 'pcm_24000', { mode: 'text_to_dialogue' })],
    [`more than ${MAX_SANDBOX_AUDIO_CHARACTERS} characters`, spec(Array.from({ length: 6 }, () => ({ text: 'y'.repeat(2000), voiceId: VOICE })))],
    ['[sandbox:fail]', spec('Say this [sandbox:fail] please')],
    ['[sandbox:fail] with [sandbox:uncertain]: the failure wins', spec('[sandbox:uncertain][sandbox:fail]')],
  ];
  for (const [name, job] of cases) {
    it(`refuses ${name}, not retryable, billing nothing; stream and recover refuse it too`, async () => {
      const outcome = await sandbox.synthesize(job);
      assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome));
      assert.equal((outcome as { retryable: boolean }).retryable, false);
      assert.equal((outcome as { billableCharacters?: number }).billableCharacters, undefined);
      const streamed = await sandbox.stream({ ...job, mode: 'text_to_speech' });
      assert.equal(streamed.kind, 'rejected');
      assert.deepEqual(await sandbox.recover(job, new Date()), { kind: 'unknown' });
    });
  }

  it('refuses MP3 and says it is unavailable when there is no ffmpeg; PCM still works', async () => {
    const without = new SandboxAudioProvider({ ffmpegPath: null });
    assert.equal(without.available(), false);
    assert.equal(new SandboxAudioProvider({ ffmpegPath: '/nonexistent/ffmpeg' }).available(), false);
    assert.equal(sandbox.available(), true);
    assert.equal((await without.synthesize(spec('Hi', 'mp3_44100_128'))).kind, 'rejected');
    assert.equal(succeeded(await without.synthesize(spec('Hi'))).audio.length, PCM_SAMPLE_RATE);
  });

  it('streams speech only: a dialogue stream is refused', async () => {
    const outcome = await sandbox.stream(spec([{ text: 'Hi', voiceId: VOICE }, { text: 'Yo', voiceId: OTHER_VOICE }]));
    assert.equal(outcome.kind, 'rejected');
  });
});

describe('sandbox audio: directives', () => {
  it('[sandbox:uncertain]: the answer is lost, and recover finds the same audio, billed the same', async () => {
    for (const format of ['pcm_24000', 'mp3_44100_128'] as const) {
      const job = spec(`[sandbox:uncertain] ${SENTENCE}`, format);
      assert.equal((await sandbox.synthesize(job)).kind, 'uncertain');
      assert.equal((await sandbox.stream(job)).kind, 'uncertain');
      const found = await sandbox.recover(job, new Date());
      assert.equal(found.kind, 'found');
      const plain = succeeded(await sandbox.synthesize(spec(SENTENCE, format)));
      assert.deepEqual(found, { kind: 'found', audio: plain.audio, billableCharacters: SENTENCE.length });
    }
    assert.ok(sandbox.reconcileDelayMs <= 1000 && sandbox.reconcileGiveUpMs >= 60_000);
  });

  it('[sandbox:delay=<ms>]: a delayed request answers after an undelayed one sent later', async () => {
    const order: string[] = [];
    const delayed = sandbox.synthesize(spec('[sandbox:delay=1500] Late')).then((outcome) => order.push(`delayed ${outcome.kind}`));
    const prompt = sandbox.synthesize(spec('Early')).then((outcome) => order.push(`prompt ${outcome.kind}`));
    await Promise.all([delayed, prompt]);
    assert.deepEqual(order, ['prompt succeeded', 'delayed succeeded']);
  });

  it('[sandbox:delay=<ms>] on a stream: accepted at once, the first chunk waits', async () => {
    const order: string[] = [];
    const delayed = streaming(await sandbox.stream(spec('[sandbox:delay=1500] Late')));
    order.push('delayed accepted');
    const reading = drain(delayed).then((chunks) => order.push(`delayed first chunk (${chunks.length > 0})`));
    const prompt = streaming(await sandbox.stream(spec('Early')));
    await drain(prompt).then((chunks) => order.push(`prompt chunks (${chunks.length > 0})`));
    await reading;
    assert.deepEqual(order, ['delayed accepted', 'prompt chunks (true)', 'delayed first chunk (true)']);
  });
});

describe('sandbox audio: stream', () => {
  it('pcm_24000: chunks of at most 0.25 s concatenate to the bytes synthesize gives; billed at the end', async () => {
    const stream = streaming(await sandbox.stream(spec(SENTENCE)));
    assert.equal(stream.billableCharacters(), undefined);
    const chunks = await drain(stream);
    assert.ok(chunks.length > 1 && chunks.every((chunk) => chunk.length <= 2 * PCM_SAMPLE_RATE * 0.25));
    assert.deepEqual(Buffer.concat(chunks), succeeded(await sandbox.synthesize(spec(SENTENCE))).audio);
    assert.equal(stream.billableCharacters(), SENTENCE.length);
  });

  it('mp3_44100_128: chunks concatenate to a valid MP3 of the right length', async () => {
    const stream = streaming(await sandbox.stream(spec(SENTENCE, 'mp3_44100_128')));
    const chunks = await drain(stream);
    assert.ok(chunks.length > 1, `${chunks.length} chunks`);
    assertMp3Lasts(Buffer.concat(chunks), (PCM_SAMPLE_RATE * SENTENCE.length) / 15);
    assert.equal(stream.billableCharacters(), SENTENCE.length);
  });

  for (const format of ['pcm_24000', 'mp3_44100_128'] as const) {
    it(`${format}: the first chunk arrives before the whole audio is made`, async () => {
      const stream = streaming(await sandbox.stream(spec(LONG_TEXT, format)));
      const iterator = stream.chunks[Symbol.asyncIterator]();
      const first = await iterator.next();
      assert.equal(first.done, false);
      assert.ok(first.value.length > 0);
      // The count is known once the last chunk is made: not yet.
      assert.equal(stream.billableCharacters(), undefined);
      const rest: Buffer[] = [first.value];
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) rest.push(next.value);
      assert.equal(stream.billableCharacters(), 2000);
      const whole = Buffer.concat(rest);
      if (format === 'pcm_24000') assert.equal(whole.length, 2 * PCM_SAMPLE_RATE * (2000 / 15));
      else assertMp3Lasts(whole, PCM_SAMPLE_RATE * (2000 / 15));
    });
  }

  it('a consumer that stops early ends the stream: no count, and a new stream still works', async () => {
    const stream = streaming(await sandbox.stream(spec(LONG_TEXT, 'mp3_44100_128')));
    for await (const chunk of stream.chunks) {
      assert.ok(chunk.length > 0);
      break;
    }
    assert.equal(stream.billableCharacters(), undefined);
    assertMp3Lasts(Buffer.concat(await drain(streaming(await sandbox.stream(spec('Again', 'mp3_44100_128'))))), PCM_SAMPLE_RATE / 2);
  });
});

describe('sandbox audio: voices', () => {
  it('lists, pages and looks voices up through the catalogue', async () => {
    const page = await sandbox.listVoices({ page: 2, pageSize: 30 });
    assert.equal(page.totalCount, usable.length);
    assert.equal(page.voices.length, usable.length - 60);
    assert.equal(page.hasMore, false);
    const privateVoice = SANDBOX_VOICES.find((voice) => voice.status === 'private')!;
    assert.equal((await sandbox.getVoice(privateVoice.id))?.status, 'private');
    assert.equal(await sandbox.getVoice('AAAAAAAAAAAAAAAAAAAA'), null);
  });

  it('previewSample: a ~2 s MP3 per voice, made once, distinct per voice; null for an unknown id', async () => {
    const sample = (await sandbox.previewSample(VOICE))!;
    const frames = readMp3Frames(sample);
    const seconds = (frames.length * 1152) / 44_100;
    assert.ok(seconds > 2 && seconds < 2.5, `${seconds} s`);
    assert.ok(frames.every((frame) => frame.bitrateKbps === 128 && frame.sampleRate === 44_100));
    assert.equal(await sandbox.previewSample(VOICE), sample, 'served from memory the second time');
    assert.notDeepEqual(await sandbox.previewSample(OTHER_VOICE), sample);
    assert.equal(await sandbox.previewSample('AAAAAAAAAAAAAAAAAAAA'), null);
  });
});
