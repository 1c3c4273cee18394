import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SandboxAudioProvider } from '../../libs/providers/index.js';
import { AudioTaskRunner } from '../../src/modules/audio/index.js';
import type { TestAccount } from '../support/factories.js';
import { readMp3Frames } from '../support/mp3-frames.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { type AudioTaskBody, createAudio, download, getAudio, ledgerOf, voicesFor, waitForAudio } from './audio-helpers.js';

/** The sandbox's documented length rule: a line lasts max(0.5 s, characters / 15); dialogue lines are 0.3 s apart. */
function expectedSeconds(lines: string[]): number {
  return lines.reduce((sum, text) => sum + Math.max(0.5, [...text].length / 15), 0) + 0.3 * (lines.length - 1);
}

const PRICE = { voice_v3: 300, voice_v4: 240, voice_v4_turbo: 120 } as const;
const CASES: Array<[keyof typeof PRICE, 'text_to_speech' | 'text_to_dialogue']> = [
  ['voice_v3', 'text_to_speech'],
  ['voice_v3', 'text_to_dialogue'],
  ['voice_v4', 'text_to_speech'],
  ['voice_v4', 'text_to_dialogue'],
  ['voice_v4_turbo', 'text_to_speech'],
];
const FORMATS = ['mp3_44100_128', 'pcm_24000'] as const;

/** Checks the stored bytes: the content type, and the length the text asks for, by decoding them. */
function assertAudio(format: (typeof FORMATS)[number], bytes: Buffer, seconds: number): void {
  if (format === 'pcm_24000') {
    assert.equal(bytes.length, Math.round(2 * 24_000 * seconds));
    return;
  }
  const frames = readMp3Frames(bytes);
  assert.ok(frames.length > 0);
  for (const frame of frames) {
    assert.equal(frame.sampleRate, 44_100);
    assert.equal(frame.bitrateKbps, 128);
  }
  const decodedSeconds = (frames.length * 1152) / 44_100;
  // The encoder adds its delay and pads the last frame: at most about two frames beyond the audio.
  assert.ok(decodedSeconds >= seconds - 1152 / 44_100 && decodedSeconds <= seconds + 3 * (1152 / 44_100), `${decodedSeconds} s decoded for ${seconds} s`);
}

describe('audio processing: real audio, settlement, failure, reconciliation', () => {
  let t: TestApp;
  let account: TestAccount;

  fundedAppForSuite({ label: 'audioproc', creditUsd: 20, environment: 'test' }, (booted) => ({ t, account } = booted));

  for (const [model, mode] of CASES) {
    for (const format of FORMATS) {
      it(`${model} ${mode} as ${format}: stored audio of the right length, charged price × billable characters`, async () => {
        const [a, b] = voicesFor(model);
        const lines = mode === 'text_to_speech' ? ['The quick brown fox jumps over the lazy dog.'] : ['Good morning, how are you?', 'Very well, thank you.', 'Shall we?'];
        const body =
          mode === 'text_to_speech'
            ? { model, mode, prompt: lines[0], controls: { voiceId: a!.id, outputFormat: format } }
            : { model, mode, controls: { outputFormat: format }, dialogue: lines.map((text, i) => ({ text, voiceId: (i % 2 ? b : a)!.id })) };
        const created = await createAudio(t, account, body);
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const done = await waitForAudio(t, account, created.body.id);
        assert.equal(done.status, 'succeeded', done.failureReason);
        const characters = lines.join('').length;
        assert.deepEqual(done.usage, { inputCharacters: characters, billableCharacters: characters, chargedUsd: (PRICE[model] * characters) / 1e6 });
        assert.equal(done.outputs.audios.length, 1);
        const [audio] = done.outputs.audios;
        const contentType = format === 'pcm_24000' ? 'audio/L16;rate=24000;channels=1' : 'audio/mpeg';
        assert.equal(audio!.contentType, contentType);
        const file = await download(audio!.url);
        assert.equal(file.contentType, contentType);
        assert.equal(file.bytes.length, audio!.bytes);
        assertAudio(format, file.bytes, expectedSeconds(lines));
        const ledger = await ledgerOf(t, done.id);
        assert.equal(ledger.holds, 1);
        assert.equal(ledger.captured, BigInt(PRICE[model] * characters));
        assert.equal(ledger.captured + ledger.released, ledger.amount);
      });
    }
  }

  it('[sandbox:fail] ends the task failed with a reason and releases the whole hold', async () => {
    const created = await createAudio(t, account, { model: 'voice_v4', mode: 'text_to_speech', prompt: 'no luck [sandbox:fail]', controls: { voiceId: voicesFor('voice_v4')[0]!.id } });
    const done = await waitForAudio(t, account, created.body.id);
    assert.equal(done.status, 'failed');
    assert.ok(done.failureReason);
    assert.deepEqual(done.outputs.audios, []);
    assert.equal(done.usage.chargedUsd, 0);
    const ledger = await ledgerOf(t, done.id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.captured, 0n);
    assert.equal(ledger.released, ledger.amount);
  });
});

describe('audio reconciliation: a lost answer is recovered, never resubmitted', () => {
  let t: TestApp;
  let account: TestAccount;

  // No worker in this app: the test moves the task step by step with the runner.
  fundedAppForSuite({ label: 'audiorecon', env: { APP_ROLE: 'api' }, creditUsd: 5, environment: 'test' }, (booted) => ({ t, account } = booted));

  it('[sandbox:uncertain] → reconciliationRequired (shown, keep polling), then succeeded with one charge', async () => {
    const prompt = 'lost in transit [sandbox:uncertain]';
    const created = await createAudio(t, account, { model: 'voice_v4', mode: 'text_to_speech', prompt, controls: { voiceId: voicesFor('voice_v4')[0]!.id } });
    const runner = t.app.get(AudioTaskRunner);
    const first = await runner.run(created.body.id);
    assert.equal(first.kind, 'wait');
    const reconciling: AudioTaskBody = await getAudio(t, account, created.body.id);
    assert.equal(reconciling.status, 'processing');
    assert.equal(reconciling.phase, 'reconciliationRequired');
    assert.deepEqual(reconciling.outputs.audios, []);
    assert.deepEqual(await runner.run(created.body.id), { kind: 'done' });
    const done = await getAudio(t, account, created.body.id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.phase, undefined);
    // The sandbox bills the text without its directives (trimmed): billable differs from input.
    const billable = 'lost in transit'.length;
    assert.equal(done.usage.inputCharacters, prompt.length);
    assert.equal(done.usage.billableCharacters, billable);
    const ledger = await ledgerOf(t, done.id);
    assert.equal(ledger.captures, 1);
    assert.equal(ledger.captured, BigInt(240 * billable));
    assert.equal(ledger.captured + ledger.released, ledger.amount);
    assert.equal(t.app.get(SandboxAudioProvider).submissions.get(done.id), 1, 'synthesized once, recovered after');
    // A duplicate run of a finished task changes nothing.
    assert.deepEqual(await runner.run(created.body.id), { kind: 'done' });
    assert.equal((await ledgerOf(t, done.id)).captures, 1);
  });
});
