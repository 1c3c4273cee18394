import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BLOCK_SAMPLES,
  LINE_GAP_SAMPLES,
  PCM_SAMPLE_RATE,
  pcmBlocks,
  planSpeech,
  renderPcm,
  voicePitchHz,
} from './sandbox-speech.js';
import { SANDBOX_VOICES } from './sandbox-voices.js';

const [first, second] = pickDistinctVoices();
const SENTENCE = 'The quick brown fox jumps over the lazy dog';

/** Two catalogue voices at least four semitones apart, so their pitch is told apart for sure. */
function pickDistinctVoices(): [string, string] {
  const ids = SANDBOX_VOICES.map((voice) => voice.id);
  for (const a of ids) for (const b of ids) if (voicePitchHz(b) / voicePitchHz(a) > 2 ** (4 / 12)) return [a, b];
  throw new Error('the catalogue has no two distinct voices');
}

/** Samples of PCM s16le, as numbers. */
function samples(pcm: Buffer): Int16Array {
  return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
}

/** Sign changes per second, silence (0) skipped: twice the dominant frequency of a tone. */
function crossingsPerSecond(segment: Int16Array): number {
  let crossings = 0;
  let sign = 0;
  for (const value of segment) {
    if (value === 0) continue;
    const next = Math.sign(value);
    if (sign !== 0 && next !== sign) crossings++;
    sign = next;
  }
  return crossings / (segment.length / PCM_SAMPLE_RATE);
}

describe('sandbox speech: length follows the text', () => {
  it('a line lasts characters / 15 s: 2 × 24,000 × seconds bytes exactly', async () => {
    for (const text of ['Hello world, how are you today?', SENTENCE, 'x'.repeat(2000)]) {
      const audio = await renderPcm(planSpeech([{ text, voiceId: first }]));
      assert.equal(audio.length, (2 * PCM_SAMPLE_RATE * text.length) / 15, text.slice(0, 20));
    }
  });

  it('a short line lasts at least 0.5 s; an empty one is 0.5 s of silence', async () => {
    assert.equal((await renderPcm(planSpeech([{ text: 'Hi', voiceId: first }]))).length, 2 * PCM_SAMPLE_RATE * 0.5);
    const empty = await renderPcm(planSpeech([{ text: '', voiceId: first }]));
    assert.equal(empty.length, PCM_SAMPLE_RATE);
    assert.ok(samples(empty).every((value) => value === 0));
  });

  it('directives are not spoken nor billed; characters are code points, spaces included', () => {
    const plan = planSpeech([{ text: '[sandbox:delay=10] Grüße, 東京! [sandbox:uncertain]', voiceId: first }]);
    assert.equal(plan.billableCharacters, 'Grüße, 東京!'.length);
    assert.equal(planSpeech([{ text: '😀😀', voiceId: first }]).billableCharacters, 2);
    // Whitespace runs collapse to one space and the ends are trimmed (what stripping a directive leaves).
    assert.equal(planSpeech([{ text: '  a \n\n b  [sandbox:fail]  ', voiceId: first }]).billableCharacters, 3);
    assert.equal(plan.totalSamples, Math.max(PCM_SAMPLE_RATE / 2, (10 * PCM_SAMPLE_RATE) / 15));
  });

  it('dialogue: the lines in order with 0.3 s of silence between them; billed characters add up', async () => {
    const lines = [
      { text: SENTENCE, voiceId: first },
      { text: 'Ok', voiceId: second },
      { text: 'And that is all.', voiceId: first },
    ];
    const plan = planSpeech(lines);
    const expectedSeconds = SENTENCE.length / 15 + 0.5 + 16 / 15 + 2 * 0.3;
    const audio = samples(await renderPcm(plan));
    assert.equal(audio.length, Math.round(expectedSeconds * PCM_SAMPLE_RATE));
    assert.equal(plan.billableCharacters, SENTENCE.length + 2 + 16);
    for (const gapStart of [plan.lines[1]!.start - LINE_GAP_SAMPLES, plan.lines[2]!.start - LINE_GAP_SAMPLES]) {
      assert.ok(audio.subarray(gapStart, gapStart + LINE_GAP_SAMPLES).every((value) => value === 0), `silence at ${gapStart}`);
    }
  });
});

describe('sandbox speech: sounds like speech, in the voice of each line', () => {
  it('words are voiced and the spaces between them are silent', async () => {
    const text = 'one two three';
    const audio = samples(await renderPcm(planSpeech([{ text, voiceId: first }])));
    const perCharacter = PCM_SAMPLE_RATE / 15;
    const character = (index: number) => audio.subarray(index * perCharacter, (index + 1) * perCharacter);
    for (const space of [3, 7]) assert.ok(character(space).every((value) => value === 0), `space at ${space}`);
    for (const letter of [1, 5, 10]) assert.ok(character(letter).some((value) => Math.abs(value) > 1000), `letter at ${letter}`);
  });

  it('two voices of a dialogue speak at their own pitch: zero crossings follow each voice pitch', async () => {
    const plan = planSpeech([
      { text: SENTENCE, voiceId: first },
      { text: SENTENCE, voiceId: second },
    ]);
    const audio = samples(await renderPcm(plan));
    const measured = plan.lines.map((line) => crossingsPerSecond(audio.subarray(line.start, line.start + line.samples)));
    const expectedRatio = voicePitchHz(second) / voicePitchHz(first);
    assert.ok(measured[1]! / measured[0]! > 2 ** (3 / 12), `crossings ${measured.join(' vs ')}`);
    assert.ok(Math.abs(measured[1]! / measured[0]! / expectedRatio - 1) < 0.05, `ratio ${measured[1]! / measured[0]!} vs ${expectedRatio}`);
  });

  it('a voice pitch lies in 95–380 Hz and depends on the id alone', () => {
    for (const voice of SANDBOX_VOICES) {
      const pitch = voicePitchHz(voice.id);
      assert.ok(pitch >= 95 && pitch < 380, `${voice.id}: ${pitch}`);
      assert.equal(voicePitchHz(voice.id), pitch);
    }
    assert.ok(new Set(SANDBOX_VOICES.map((voice) => voicePitchHz(voice.id).toFixed(1))).size > SANDBOX_VOICES.length * 0.9);
  });
});

describe('sandbox speech: produced in blocks, deterministically', () => {
  it('blocks of 0.25 s (the last one shorter) concatenate to the whole audio', async () => {
    const plan = planSpeech([{ text: `${SENTENCE}.`, voiceId: first }]);
    const blocks: Buffer[] = [];
    for await (const block of pcmBlocks(plan)) blocks.push(block);
    assert.ok(blocks.slice(0, -1).every((block) => block.length === 2 * BLOCK_SAMPLES));
    assert.ok(blocks.at(-1)!.length > 0 && blocks.at(-1)!.length <= 2 * BLOCK_SAMPLES);
    assert.equal(blocks.length, Math.ceil(plan.totalSamples / BLOCK_SAMPLES));
    assert.deepEqual(Buffer.concat(blocks), await renderPcm(plan));
  });

  it('gives the event loop a turn between blocks: other work runs all along a long render', async () => {
    const plan = planSpeech([{ text: 'y'.repeat(2000), voiceId: first }]);
    let turns = 0;
    let rendering = true;
    const tick = () => {
      turns++;
      if (rendering) setImmediate(tick);
    };
    setImmediate(tick);
    await renderPcm(plan);
    rendering = false;
    const blocks = Math.ceil(plan.totalSamples / BLOCK_SAMPLES);
    // Rendered in one go, the 534 blocks would leave one turn or two to the ticker.
    assert.ok(turns >= blocks / 2, `${turns} turns for ${blocks} blocks`);
  });

  it('the same lines give the same bytes; another voice or other words give others', async () => {
    const render = (text: string, voiceId: string) => renderPcm(planSpeech([{ text, voiceId }]));
    const once = await render(SENTENCE, first);
    assert.deepEqual(await render(SENTENCE, first), once);
    assert.notDeepEqual(await render(SENTENCE, second), once);
    // The sound follows the words' shape (letters, spaces), not which letters they are.
    assert.deepEqual(await render(SENTENCE.replace('fox', 'cat'), first), once);
    assert.notDeepEqual(await render(SENTENCE.replace('fox jumps', 'foxjumps '), first), once);
  });
});
