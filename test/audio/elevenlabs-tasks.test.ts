/**
 * Audio tasks of a live key through the whole app, with the elevenlabs adapter speaking to the
 * wire-format fake: what the runner does with each outcome the adapter reports (429 then success,
 * a voice the upstream does not know, a lost answer, usage billed on a refused answer, refused
 * credentials, a 5xx every time). No worker runs in this app: each test moves the task with the
 * runner as a worker would, and the clock is the test's, so the give-up window is reached at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { AudioTaskRunner } from '../../src/modules/audio/index.js';
import { FakeElevenLabsServer } from '../fakes/elevenlabs-server.js';
import type { TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { type AudioTaskBody, createAudio, download, footprint, getAudio, ledgerOf } from './audio-helpers.js';

/** A premade voice of the fake's account (found through GET /v2/voices). */
const VOICE = 'JBFqnCBsd6RMkjVDRZzb';
const speech = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'voice_v4', mode: 'text_to_speech', prompt, controls: { voiceId: VOICE, outputFormat: 'pcm_24000' }, ...extra });

describe('audio tasks on the live elevenlabs adapter (fake upstream)', () => {
  const fake = new FakeElevenLabsServer();
  const clock = new ManualClock(new Date());
  let t: TestApp;
  let account: TestAccount;

  // The fake starts before the app (its URL is in the app's env).
  before(() => fake.start());
  after(() => fake.stop());
  fundedAppForSuite(
    () => ({ label: 'elevenTasks', clock, env: { APP_ROLE: 'api', ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.baseUrl }, creditUsd: 5 }),
    (booted) => ({ t, account } = booted),
  );

  const generationsOf = (prompt: string) => fake.requestsTo('/v1/text-to-speech/').filter((request) => request.body?.text === prompt);

  /** Runs the task as a worker would (ignoring the waits) until it is terminal; returns how many runs it took. */
  async function runToEnd(id: string, maxRuns = 10): Promise<{ task: AudioTaskBody; runs: number }> {
    const runner = t.app.get(AudioTaskRunner);
    for (let runs = 1; runs <= maxRuns; runs++) {
      if ((await runner.run(id)).kind === 'done') return { task: await getAudio(t, account, id), runs };
    }
    assert.fail(`task ${id} not terminal after ${maxRuns} runs`);
  }

  it('a 429 with Retry-After, then success: sent again, succeeded, one charge on the billed characters', async () => {
    const prompt = 'Retry me fake:rate-limit-once';
    const created = await createAudio(t, account, speech(prompt));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { task, runs } = await runToEnd(created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(runs, 2, 'the first run backs off after the 429');
    assert.equal(generationsOf(prompt).length, 2);
    assert.equal(task.usage.billableCharacters, prompt.length);
    const file = await download(task.outputs.audios[0]!.url);
    assert.equal(file.bytes.length, task.outputs.audios[0]!.bytes);
    const ledger = await ledgerOf(t, task.id);
    assert.equal(ledger.captures, 1);
    assert.equal(ledger.captured, ledger.amount, 'billed = submitted characters: the whole hold is captured');
    assert.equal(task.usage.chargedUsd * 1e6, Number(ledger.captured));
  });

  it('a voice the upstream does not know: 400 audio.voice_unsupported at creation, nothing held, nothing generated', async () => {
    const before = await footprint(t, account);
    const sent = fake.requestsTo('/v1/text-to-speech/').length;
    const answer = await createAudio(t, account, speech('Who am I?', { controls: { voiceId: 'Zz0000000000000000Zz' } }));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'audio.voice_unsupported');
    assert.deepEqual(await footprint(t, account), before);
    assert.equal(fake.requestsTo('/v1/text-to-speech/').length, sent);
  });

  it('a lost answer: reconciliationRequired while it is looked for, never sent again; failed and released after the give-up window', async () => {
    const prompt = 'Lost fake:lose-answer';
    const created = await createAudio(t, account, speech(prompt));
    const runner = t.app.get(AudioTaskRunner);
    assert.equal((await runner.run(created.body.id)).kind, 'wait');
    const pending = await getAudio(t, account, created.body.id);
    assert.equal(pending.status, 'processing');
    assert.equal(pending.phase, 'reconciliationRequired');
    assert.equal((await runner.run(created.body.id)).kind, 'wait', 'still inside the give-up window');
    clock.advance(11 * 60_000);
    const { task } = await runToEnd(created.body.id);
    assert.equal(task.status, 'failed');
    assert.equal(task.phase, undefined);
    assert.ok(task.failureReason);
    assert.equal(task.usage.chargedUsd, 0);
    assert.equal(generationsOf(prompt).length, 1, 'never resubmitted');
    const ledger = await ledgerOf(t, task.id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.released, ledger.amount);
  });

  it('audio the upstream billed but that cannot be kept (over the byte cap): failed, charged the billed characters', async () => {
    const prompt = 'Far too long an answer';
    fake.next({ kind: 'oversize', bytes: 40 * 1024 * 1024, declareLength: true });
    const created = await createAudio(t, account, speech(prompt));
    const { task } = await runToEnd(created.body.id);
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.outputs.audios, []);
    assert.equal(task.usage.billableCharacters, prompt.length);
    const ledger = await ledgerOf(t, task.id);
    assert.equal(ledger.captures, 1);
    assert.equal(ledger.captured, ledger.amount);
    assert.equal(task.usage.chargedUsd * 1e6, Number(ledger.captured));
    assert.equal(generationsOf(prompt).length, 1, 'a final refusal is not retried');
  });

  it('refused credentials or quota: failed at once with a clean reason (nothing of the upstream message), released', async () => {
    const prompt = 'Over quota fake:quota';
    const created = await createAudio(t, account, speech(prompt));
    const { task } = await runToEnd(created.body.id);
    assert.equal(task.status, 'failed');
    assert.ok(task.failureReason);
    assert.doesNotMatch(task.failureReason!, /sk_secret|credits|10000/);
    assert.equal(generationsOf(prompt).length, 1);
    assert.equal((await ledgerOf(t, task.id)).status, 'released');
  });

  // Last: five failures in a row open the adapter's circuit breaker (30 s on the real clock).
  it('a 5xx every time: five attempts in all, then failed and released; creation then answers 503 while the circuit is open', async () => {
    const prompt = 'Broken upstream fake:server-error';
    const created = await createAudio(t, account, speech(prompt));
    const { task, runs } = await runToEnd(created.body.id);
    assert.equal(task.status, 'failed');
    assert.equal(runs, 5);
    assert.equal(generationsOf(prompt).length, 5);
    const ledger = await ledgerOf(t, task.id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.captured, 0n);
    const before = await footprint(t, account);
    const refused = await createAudio(t, account, speech('While it is down'));
    assert.equal(refused.status, 503);
    assert.equal(refused.body.error.code, 'audio.unavailable');
    assert.deepEqual(await footprint(t, account), before);
  });
});
