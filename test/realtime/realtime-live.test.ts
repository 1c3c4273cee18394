/**
 * The live path: a live key's turn goes to the `elevenlabs` adapter's HTTP stream (the fake
 * ElevenLabs server, real wire format), asked for `pcm_24000`; its bytes come back as the deltas.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { microsToUsd } from '../../libs/common/index.js';
import { holdLedger, pollTask, speechListCost } from '../audio/support/speech-stream-helpers.js';
import { fakeAudio, FakeElevenLabsServer } from '../fakes/elevenlabs-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { connectReady, openSession, SESSIONS } from './realtime-helpers.js';

describe('realtime turns on the live adapter (fake ElevenLabs)', () => {
  let fake: FakeElevenLabsServer;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    fake = await new FakeElevenLabsServer().start();
    t = await bootTestApp({ label: 'rtlive', env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_BASE_URL: fake.baseUrl } });
    account = await createAccount(t, { creditUsd: 5, environment: 'live' });
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  it('streams the upstream PCM as audio.delta frames and completes with the billed characters', async () => {
    const session = await openSession(t, account, { model: 'voice_v4', controls: { voiceId: 'JBFqnCBsd6RMkjVDRZzb' } });
    const { client } = await connectReady(session.url, session.token);
    const text = 'Hello from the live path.';
    client.send({ type: 'turn.commit', turnId: 'live-1', text });
    const accepted = await client.next('turn.accepted');
    assert.equal(accepted.estimatedUsd, microsToUsd(speechListCost('voice_v4', text.length)));
    const frames = await client.until(['turn.completed', 'turn.status']);
    const end = frames.at(-1)!;
    assert.equal(end.type, 'turn.completed', JSON.stringify(end));
    const pcm = Buffer.concat(frames.filter((f) => f.type === 'audio.delta').map((f) => Buffer.from(f.audio as string, 'base64')));
    assert.deepEqual(pcm, fakeAudio(text.length, 'pcm_24000'));
    const sent = fake.requestsTo('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream');
    assert.equal(sent.length, 1, 'one upstream call');
    assert.deepEqual(sent[0]!.query.output_format, ['pcm_24000']);
    assert.equal(sent[0]!.body.model_id, 'eleven_v3');
    assert.equal(sent[0]!.body.text, text);
    assert.deepEqual(end.usage, (await pollTask(t, account, accepted.taskId as string)).usage);
    assert.equal(end.usage.billableCharacters, text.length);
    assert.equal((await holdLedger(t, accepted.taskId as string)).entries.capture, 1);
    await client.close();
    await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { method: 'DELETE', key: account.key });
  });
});
