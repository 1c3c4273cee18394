import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SandboxAudioProvider } from '../../libs/providers/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';
import { anyModelVoice, holdLedger, SPEECH_PATH, speechListCost, storedAudio, taskRow, terminal, waitForTaskStatus } from './support/speech-stream-helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const LEASE_MS = '2000';

/**
 * The API process that runs a speech stream is killed with SIGKILL after the client got the
 * first chunk. Its lease lapses, the watchdog job finds the task still `streaming`, and a worker
 * reconciles it (never streams it again): one audio file, one charge.
 */
describe('streaming speech: the API process killed mid-stream', () => {
  let worker: TestApp;
  let account: TestAccount;
  let child: ChildProcess | undefined;

  before(async () => {
    worker = await bootTestApp({ label: 'speechkill', env: { APP_ROLE: 'worker', AUDIO_STREAM_LEASE_MS: LEASE_MS } });
    account = await createAccount(worker, { creditUsd: 20, environment: 'test' });
  });
  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await worker.close();
  });

  async function startApiChild(): Promise<string> {
    const port = await freePort();
    const env = {
      NODE_ENV: 'test',
      PORT: String(port),
      DATABASE_URL: worker.db.url,
      DATABASE_CREATE_IF_MISSING: 'false',
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: worker.queuePrefix,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MEDIA_DIR: worker.mediaDir,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: 'silent',
      DEMO_SEED: 'false',
      AUDIO_STREAM_LEASE_MS: LEASE_MS,
    };
    child = fork(join(here, 'support', 'speech-api-child.js'), [], { env: { ...process.env, SVC_CHILD_ENV: JSON.stringify(env) }, stdio: 'inherit' });
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`API child exited early (${code})`)));
    });
    return `http://127.0.0.1:${port}`;
  }

  it('a worker takes the task over after the lease: one audio file, one charge, the upstream asked once', async () => {
    const baseUrl = await startApiChild();
    const characters = 1500;
    const answer = await fetch(`${baseUrl}${SPEECH_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'voice_v4', prompt: 'b'.repeat(characters), controls: { voiceId: anyModelVoice(), outputFormat: 'pcm_24000' } }),
    });
    assert.equal(answer.status, 200);
    const id = answer.headers.get('x-svc-task-id')!;
    const reader = answer.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    const received = [Buffer.from(first.value!)];
    // Killed while it streams (not after): otherwise this test would prove nothing.
    assert.equal((await taskRow(worker, id)).phase, 'streaming');
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child!.kill('SIGKILL');
    await exited;

    // The client sees a cut body, never a clean end.
    await assert.rejects(async () => {
      for (;;) {
        const next = await reader.read();
        if (next.done) return;
        received.push(Buffer.from(next.value));
      }
    });

    const task = await waitForTaskStatus(worker, id, terminal, 'the orphaned stream being recovered', 60_000);
    assert.equal(task.status, 'succeeded', task.failure_reason ?? '');
    const audio = await storedAudio(worker, account, id);
    assert.equal(audio.length, 2 * 24_000 * (characters / 15));
    // What the client got before the kill is the beginning of the recovered audio (the sandbox is deterministic).
    const streamed = Buffer.concat(received);
    assert.deepEqual(audio.subarray(0, streamed.length), streamed);

    const objects = await worker.db.query(`SELECT 1 FROM media_object WHERE key = $1 AND deleted_at IS NULL`, [task.media_key]);
    assert.equal(objects.length, 1);
    const ledger = await holdLedger(worker, id);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.entries.capture, 1);
    assert.equal(ledger.capture, speechListCost('voice_v4', characters));
    assert.equal(ledger.capture + ledger.release, ledger.amount);
    // The worker recovered it without sending it again (recover() is not a submission).
    assert.equal(worker.app.get(SandboxAudioProvider).submissions.get(id), undefined);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
