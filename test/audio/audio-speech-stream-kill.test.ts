import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SandboxAudioProvider } from '../../libs/providers/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';
import { anyModelVoice, holdLedger, readChunks, SPEECH_PATH, speechListCost, storedAudio, taskRow, terminal, waitForTaskStatus } from './support/speech-stream-helpers.js';

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
  const children: ChildProcess[] = [];

  before(async () => {
    worker = await bootTestApp({ label: 'speechkill', env: { APP_ROLE: 'worker', AUDIO_STREAM_LEASE_MS: LEASE_MS } });
    account = await createAccount(worker, { creditUsd: 20, environment: 'test' });
  });
  after(async () => {
    for (const started of children) if (started.exitCode === null) started.kill('SIGKILL');
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
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`API child exited early (${code})`)));
    });
    return `http://127.0.0.1:${port}`;
  }

  it('a stream that outlives its lease keeps it (heartbeat): the watchdog leaves it alone', async () => {
    const baseUrl = await startApiChild();
    const prompt = 'still here';
    // The first chunk comes after 5 s: past the first lease (2 s) and the watchdog's first run (3 s).
    const answer = await fetch(`${baseUrl}${SPEECH_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'voice_v4', prompt: `${prompt}[sandbox:delay=5000]`, controls: { voiceId: anyModelVoice(), outputFormat: 'pcm_24000' } }),
    });
    assert.equal(answer.status, 200);
    const id = answer.headers.get('x-svc-task-id')!;
    const received = await readChunks(answer);
    const task = await waitForTaskStatus(worker, id, terminal, 'the long stream ending');
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(await storedAudio(worker, account, id), Buffer.concat(received));
    assert.equal((await holdLedger(worker, id)).entries.capture, 1);
    // A takeover clears the lease (and a lease taken over is never extended again): a lease far past
    // the first one means the heartbeat kept it and the watchdog found it alive.
    const [row] = await worker.db.query<{ extended_by: number | null }>(`SELECT extract(epoch FROM lease_expires_at - created_at) * 1000 AS extended_by FROM audio_task WHERE id = $1`, [id]);
    assert.ok(row!.extended_by !== null && Number(row!.extended_by) > 5000, `lease ends ${row!.extended_by} ms after creation`);
  });

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
