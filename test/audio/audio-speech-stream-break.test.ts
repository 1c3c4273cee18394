import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeElevenLabsServer } from '../fakes/elevenlabs-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { anyModelVoice, holdLedger, readChunks, speak, speechListCost, taskRow, terminal, waitForTaskStatus } from './support/speech-stream-helpers.js';

/** A premade voice of the fake ElevenLabs account. */
const LIVE_VOICE = 'JBFqnCBsd6RMkjVDRZzb';

/**
 * Streams that do not end well, through the live adapter against the fake ElevenLabs upstream
 * (wire format), and a stream that outlives REQUEST_TIMEOUT_MS (the sandbox, test key).
 */
describe('streaming speech: broken streams and long streams', () => {
  let api: TestApp;
  let fake: FakeElevenLabsServer;
  let live: TestAccount;
  let sandbox: TestAccount;

  before(async () => {
    fake = await new FakeElevenLabsServer().start();
    api = await bootTestApp({
      label: 'speechbreak',
      // The request timeout bounds receiving a request, never the answer: a 1 s limit must not cut a longer stream.
      env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.baseUrl, REQUEST_TIMEOUT_MS: '1000' },
    });
    live = await createAccount(api, { creditUsd: 20, environment: 'live' });
    sandbox = await createAccount(api, { creditUsd: 20, environment: 'test' });
  });
  after(async () => {
    await api.close();
    await fake.stop();
  });

  it('the upstream cuts the stream: the body is cut short, the task fails and keeps what the upstream billed', async () => {
    const prompt = 'Cut this stream in the middle, please; it will not end well at all.';
    fake.next({ kind: 'cut-body' });
    const answer = await speak(api, live, { model: 'voice_v4', prompt, controls: { voiceId: LIVE_VOICE, outputFormat: 'pcm_24000' } });
    assert.equal(answer.status, 200);
    const id = answer.headers.get('x-svc-task-id')!;
    await assert.rejects(readChunks(answer));

    const task = await waitForTaskStatus(api, id, terminal, 'the broken stream failing');
    assert.equal(task.status, 'failed');
    assert.match(task.failure_reason ?? '', /stream broke/);
    assert.equal(task.media_key, null);
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.entries.capture, 1);
    // The fake bills the text's length in x-character-count, sent with the 200.
    assert.equal(ledger.capture, speechListCost('voice_v4', prompt.length));
    assert.equal(ledger.capture + ledger.release, ledger.amount);
    assert.equal(fake.requestsTo('/v1/text-to-speech/').length, 1);
  });

  it('a retryable upstream refusal: 503 audio.unavailable with Retry-After and the task id, task failed, released; the same key then speaks', async () => {
    fake.next({ kind: 'error', status: 429, detailStatus: 'system_busy', retryAfter: '7' });
    const idempotencyKey = `busy-${Date.now()}`;
    const body = { model: 'voice_v4', prompt: 'Busy upstream.', controls: { voiceId: LIVE_VOICE } };
    const answer = await speak(api, live, body, { idempotencyKey });
    assert.equal(answer.status, 503);
    assert.equal(((await answer.json()) as any).error.code, 'audio.unavailable');
    assert.equal(answer.headers.get('retry-after'), '7');
    const id = answer.headers.get('x-svc-task-id')!;
    assert.equal((await taskRow(api, id)).status, 'failed');
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.capture, 0n);

    // Spec › Errors › Audio: a 503 is repeated with the same key; it is not spent on the refusal.
    const again = await speak(api, live, body, { idempotencyKey });
    assert.equal(again.status, 200);
    const retried = again.headers.get('x-svc-task-id')!;
    assert.notEqual(retried, id);
    assert.ok((await readChunks(again)).length > 0);
    assert.equal((await waitForTaskStatus(api, retried, terminal, 'the retried stream ending')).status, 'succeeded');
    assert.equal((await holdLedger(api, retried)).capture, speechListCost('voice_v4', body.prompt.length));
    // And the key now names the task that spoke: a third send replays it.
    const replay = await speak(api, live, body, { idempotencyKey });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('x-svc-task-id'), retried);
    assert.equal(replay.headers.get('idempotency-replay'), 'true');
    await replay.arrayBuffer();
  });

  it("the upstream refuses the gateway's own account (quota exhausted): 503 audio.unavailable, not the client's 400; nothing charged", async () => {
    fake.next({ kind: 'error', status: 401, detailStatus: 'quota_exceeded', message: 'This request exceeds your quota. Key sk_secret_123 has 12 credits left.' });
    const answer = await speak(api, live, { model: 'voice_v4', prompt: 'Over quota.', controls: { voiceId: LIVE_VOICE } });
    assert.equal(answer.status, 503);
    const error = ((await answer.json()) as any).error;
    assert.equal(error.code, 'audio.unavailable');
    assert.doesNotMatch(error.message, /sk_|credits/);
    assert.equal(answer.headers.get('retry-after'), '30');
    const id = answer.headers.get('x-svc-task-id')!;
    assert.equal((await taskRow(api, id)).status, 'failed');
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.capture, 0n);
  });

  it('a stream longer than REQUEST_TIMEOUT_MS is not cut', async () => {
    const answer = await speak(api, sandbox, { model: 'voice_v4', prompt: 'patience[sandbox:delay=2500]', controls: { voiceId: anyModelVoice(), outputFormat: 'pcm_24000' } });
    assert.equal(answer.status, 200);
    const body = Buffer.concat(await readChunks(answer));
    assert.equal(body.length, 2 * 24_000 * Math.max(0.5, 'patience'.length / 15));
    const id = answer.headers.get('x-svc-task-id')!;
    assert.equal((await waitForTaskStatus(api, id, terminal, 'the long stream ending')).status, 'succeeded');
  });
});
