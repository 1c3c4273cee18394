import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUDIO_QUEUE } from '../../src/modules/audio/audio-jobs.js';
import { Queues } from '../../src/queue/queues.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { readMp3Frames } from '../support/mp3-frames.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import {
  anyModelVoice,
  holdLedger,
  pollTask,
  readChunks,
  speak,
  speechListCost,
  storedAudio,
  taskRow,
  terminal,
  waitForTaskStatus,
} from './support/speech-stream-helpers.js';
import { walletFigures } from './voices-helpers.js';

const PCM_TYPE = 'audio/L16;rate=24000;channels=1';
/** The sandbox speaks 15 characters a second, a line at least half a second (docs/audio.md › Sandbox audio). */
const sandboxSeconds = (characters: number): number => Math.max(0.5, characters / 15);
const text = (characters: number): string => 'a'.repeat(characters);

describe('streaming speech POST /v1/audio/speech (sandbox)', () => {
  let api: TestApp;
  let account: TestAccount;
  const voiceId = anyModelVoice();

  before(async () => {
    api = await bootTestApp({ label: 'speechstream' });
    account = await createAccount(api, { creditUsd: 50, environment: 'test' });
    assert.ok(account.key.startsWith('svc_test_'));
  });
  after(async () => {
    await api.close();
  });

  const pcm = (prompt: string, extra: Record<string, unknown> = {}) => ({ model: 'voice_v4', prompt, controls: { voiceId, outputFormat: 'pcm_24000' }, ...extra });

  it('streams PCM chunk by chunk: headers, length of the text, the stored audio, one charge on billable characters', async () => {
    const prompt = text(1500);
    const answer = await speak(api, account, pcm(prompt));
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), PCM_TYPE);
    assert.equal(answer.headers.get('transfer-encoding'), 'chunked');
    assert.equal(answer.headers.get('content-length'), null);
    const id = answer.headers.get('x-svc-task-id')!;
    assert.match(id, /^audio:[0-9a-f-]{36}$/);

    let statusAtFirstChunk = '';
    const chunks = await readChunks(answer, async (index) => {
      if (index === 0) statusAtFirstChunk = (await taskRow(api, id)).status;
    });
    // The first chunk was in hand while the task was still running: the audio is relayed, not buffered to the end.
    assert.equal(statusAtFirstChunk, 'processing');
    assert.ok(chunks.length > 1, 'more than one chunk');
    const streamed = Buffer.concat(chunks);
    assert.equal(streamed.length, 2 * 24_000 * sandboxSeconds(1500));

    // Chunks alone do not confirm success: the task does.
    const task = await waitForTaskStatus(api, id, terminal, 'the streamed task ending');
    assert.equal(task.status, 'succeeded', task.failure_reason ?? '');
    assert.deepEqual(await storedAudio(api, account, id), streamed);
    const polled = await pollTask(api, account, id);
    assert.equal(polled.outputs.audios[0].contentType, PCM_TYPE);
    assert.equal(polled.outputs.audios[0].bytes, streamed.length);
    assert.equal(polled.usage.inputCharacters, 1500);
    assert.equal(polled.usage.billableCharacters, 1500);

    const ledger = await holdLedger(api, id);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.status, 'settled');
    assert.equal(ledger.capture, speechListCost('voice_v4', 1500));
    assert.equal(ledger.capture + ledger.release, ledger.amount);
    assert.equal(ledger.entries.capture, 1);
    assert.equal(polled.usage.chargedUsd * 1_000_000, Number(ledger.capture));
  });

  it('streams MP3 frames at 44.1 kHz equal to the stored file; mode omitted is text_to_speech; billable excludes directives', async () => {
    const prompt = 'Hello from the streaming endpoint.[sandbox:delay=1]';
    const answer = await speak(api, account, { model: 'voice_v4_turbo', prompt, controls: { voiceId } });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'audio/mpeg');
    assert.equal(answer.headers.get('transfer-encoding'), 'chunked');
    const id = answer.headers.get('x-svc-task-id')!;
    const streamed = Buffer.concat(await readChunks(answer));
    const frames = readMp3Frames(streamed);
    assert.ok(frames.every((frame) => frame.sampleRate === 44_100 && frame.bitrateKbps === 128));
    const spoken = 'Hello from the streaming endpoint.'.length;
    // Whole frames of 1,152 samples cover the speech (the encoder adds at most a few frames of padding).
    const seconds = (frames.length * 1152) / 44_100;
    assert.ok(seconds > sandboxSeconds(spoken) - 0.05 && seconds < sandboxSeconds(spoken) + 0.5, `${seconds} s of MP3 for ${sandboxSeconds(spoken)} s of speech`);

    const task = await waitForTaskStatus(api, id, terminal, 'the MP3 task ending');
    assert.equal(task.status, 'succeeded');
    assert.equal(task.billable_characters, spoken);
    assert.deepEqual(await storedAudio(api, account, id), streamed);
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.capture, speechListCost('voice_v4_turbo', spoken));
    assert.equal(ledger.capture + ledger.release, ledger.amount);
  });

  it('a client that leaves after the first chunk does not cancel the generation nor its charge', async () => {
    const controller = new AbortController();
    const answer = await speak(api, account, pcm(text(1200)), { signal: controller.signal });
    assert.equal(answer.status, 200);
    const id = answer.headers.get('x-svc-task-id')!;
    const reader = answer.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    controller.abort();

    const task = await waitForTaskStatus(api, id, terminal, 'the abandoned stream ending');
    assert.equal(task.status, 'succeeded', task.failure_reason ?? '');
    assert.equal((await storedAudio(api, account, id)).length, 2 * 24_000 * sandboxSeconds(1200));
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.entries.capture, 1);
    assert.equal(ledger.capture, speechListCost('voice_v4', 1200));
    const objects = await api.db.query(`SELECT 1 FROM media_object WHERE key = $1 AND deleted_at IS NULL`, [task.media_key]);
    assert.equal(objects.length, 1);
  });

  it('an upstream refusal before any audio: JSON error with the task id, the task failed, nothing charged', async () => {
    const before = await walletFigures(api, account);
    const answer = await speak(api, account, pcm('please fail [sandbox:fail]'));
    assert.equal(answer.status, 400);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    const body = (await answer.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'audio.generation_rejected');
    const id = answer.headers.get('x-svc-task-id')!;
    const task = await taskRow(api, id);
    assert.equal(task.status, 'failed');
    assert.equal(task.charged_micros, '0');
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.status, 'released');
    assert.equal(ledger.capture, 0n);
    assert.equal(ledger.release, ledger.amount);
    const afterwards = await walletFigures(api, account);
    assert.deepEqual(afterwards.wallet, before.wallet);
  });

  it("an upstream answer that is lost: 503 with the task id, and a worker recovers it (one audio, one charge)", async () => {
    const answer = await speak(api, account, pcm('lost answer[sandbox:uncertain]'));
    assert.equal(answer.status, 503);
    const body = (await answer.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'audio.reconciliation_required');
    assert.ok(Number(answer.headers.get('retry-after')) >= 1);
    const id = answer.headers.get('x-svc-task-id')!;
    const task = await waitForTaskStatus(api, id, terminal, 'the lost stream being reconciled');
    assert.equal(task.status, 'succeeded', task.failure_reason ?? '');
    assert.equal((await storedAudio(api, account, id)).length, 2 * 24_000 * sandboxSeconds('lost answer'.length));
    const ledger = await holdLedger(api, id);
    assert.equal(ledger.entries.capture, 1);
    assert.equal(ledger.capture, speechListCost('voice_v4', 'lost answer'.length));
  });

  it('Idempotency-Key: 409 while the stream runs, the stored audio replayed after, 409 for a different request', async () => {
    const key = `speech-${Date.now()}`;
    const body = pcm('kept open for a while [sandbox:delay=3000]');
    const first = await speak(api, account, body, { idempotencyKey: key });
    assert.equal(first.status, 200);
    const id = first.headers.get('x-svc-task-id')!;
    assert.equal((await taskRow(api, id)).phase, 'streaming');

    const during = await speak(api, account, body, { idempotencyKey: key });
    assert.equal(during.status, 409);
    assert.equal(((await during.json()) as any).error.code, 'audio.request_in_progress');
    assert.equal(during.headers.get('x-svc-task-id'), id);

    const changed = await speak(api, account, { ...body, prompt: 'another text' }, { idempotencyKey: key });
    assert.equal(changed.status, 409);
    assert.equal(((await changed.json()) as any).error.code, 'audio.idempotency_conflict');

    const streamed = Buffer.concat(await readChunks(first));
    assert.equal((await waitForTaskStatus(api, id, terminal, 'the first stream ending')).status, 'succeeded');

    const replay = await speak(api, account, body, { idempotencyKey: key });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotency-replay'), 'true');
    assert.equal(replay.headers.get('x-svc-task-id'), id);
    assert.equal(replay.headers.get('content-type'), PCM_TYPE);
    assert.equal(replay.headers.get('transfer-encoding'), 'chunked');
    assert.deepEqual(Buffer.from(await replay.arrayBuffer()), streamed);

    // One task, one charge for the key, however many times it was asked.
    const tasks = await api.db.query(`SELECT id FROM audio_task WHERE api_key_id = $1 AND id = $2`, [account.keyId, id]);
    assert.equal(tasks.length, 1);
    assert.equal((await holdLedger(api, id)).entries.capture, 1);
    // The same key on the creation endpoint is another scope.
    const generation = await api.request('/v1/audio/generations', { method: 'POST', json: { ...body, mode: 'text_to_speech' }, key: account.key, headers: { 'idempotency-key': key } });
    assert.equal(generation.status, 200);
    assert.notEqual(((await generation.json()) as any).id, id);
  });

  it('Idempotency-Key of a failed stream: 409 audio.generation_failed with the task id, nothing more charged', async () => {
    const key = `speech-failed-${Date.now()}`;
    const body = pcm('fails [sandbox:fail]');
    const first = await speak(api, account, body, { idempotencyKey: key });
    assert.equal(first.status, 400);
    const id = first.headers.get('x-svc-task-id')!;
    const before = await walletFigures(api, account);
    const again = await speak(api, account, body, { idempotencyKey: key });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as any).error.code, 'audio.generation_failed');
    assert.equal(again.headers.get('x-svc-task-id'), id);
    assert.equal(again.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(await walletFigures(api, account), before);
  });

  describe('refusals change nothing (no hold, no row, no job)', () => {
    const cases: Array<{ name: string; body: unknown; headers?: Record<string, string>; status: number; code: string }> = [
      { name: 'dialogue mode', body: { model: 'voice_v4', mode: 'text_to_dialogue', dialogue: [{ text: 'hi', voiceId: 'x' }] }, status: 400, code: 'audio.unsupported_mode' },
      { name: 'turbo dialogue', body: { model: 'voice_v4_turbo', mode: 'text_to_dialogue', dialogue: [{ text: 'hi', voiceId: 'x' }] }, status: 400, code: 'audio.unsupported_mode' },
      { name: 'mode null', body: { model: 'voice_v4', mode: null, prompt: 'hi', controls: { voiceId: 'x' } }, status: 400, code: 'audio.invalid_field' },
      { name: 'no prompt', body: { model: 'voice_v4', controls: { voiceId: 'x' } }, status: 400, code: 'audio.invalid_field' },
      { name: 'text over 2,000 characters', body: { model: 'voice_v4', prompt: text(2001), controls: { voiceId: 'x' } }, status: 400, code: 'audio.text_too_long' },
      { name: 'unknown model', body: { model: 'voice_v9', prompt: 'hi', controls: { voiceId: 'x' } }, status: 400, code: 'audio.invalid_field' },
      { name: 'unknown field', body: { model: 'voice_v4', prompt: 'hi', controls: { voiceId: 'x' }, speed: 2 }, status: 400, code: 'audio.unknown_field' },
      { name: 'bad output format', body: { model: 'voice_v4', prompt: 'hi', controls: { voiceId: 'x', outputFormat: 'wav' } }, status: 400, code: 'audio.invalid_field' },
      { name: 'unknown voice', body: { model: 'voice_v4', prompt: 'hi', controls: { voiceId: 'Zz0000000000000000Zz' } }, status: 400, code: 'audio.voice_unsupported' },
      { name: 'bad Idempotency-Key', body: { model: 'voice_v4', prompt: 'hi', controls: { voiceId: 'x' } }, headers: { 'idempotency-key': 'has space' }, status: 400, code: 'audio.invalid_idempotency_key' },
    ];
    for (const refusal of cases) {
      it(`${refusal.name} → ${refusal.status} ${refusal.code}`, async () => {
        const fresh = await createAccount(api, { creditUsd: 5, environment: 'test' });
        const before = await walletFigures(api, fresh);
        const answer = await api.request('/v1/audio/speech', { method: 'POST', json: refusal.body, key: fresh.key, headers: refusal.headers });
        const body = (await answer.json()) as { error: { code: string; message: string } };
        assert.equal(answer.status, refusal.status, JSON.stringify(body));
        assert.equal(body.error.code, refusal.code, JSON.stringify(body));
        assert.equal(answer.headers.get('x-svc-task-id'), null);
        assert.deepEqual(await walletFigures(api, fresh), before);
        assert.equal((await api.db.query(`SELECT 1 FROM audio_task WHERE api_key_id = $1`, [fresh.keyId])).length, 0);
        assert.equal((await api.db.query(`SELECT 1 FROM audio_idempotency WHERE api_key_id = $1`, [fresh.keyId])).length, 0);
      });
    }

    it('no job was enqueued by any refusal', async () => {
      const jobs = await api.app.get(Queues).get(AUDIO_QUEUE).getJobs();
      // The accepted streams above each left their watchdog job: the check below is not vacuous.
      assert.ok(jobs.length > 0);
      const refusedKeys = new Set((await api.db.query<{ id: string }>(`SELECT id FROM audio_task`)).map((r) => r.id));
      // Every audio job belongs to a task row (the accepted requests above); none to a refusal.
      for (const job of jobs) assert.ok(refusedKeys.has(job.data.taskId), `job ${job.id} has a task`);
    });

    it('a wallet that cannot cover the text → 402 audio.insufficient_balance, nothing held', async () => {
      const poor = await createAccount(api, { environment: 'test' });
      const before = await walletFigures(api, poor);
      const answer = await speak(api, poor, pcm(text(100)));
      assert.equal(answer.status, 402);
      assert.equal(((await answer.json()) as any).error.code, 'audio.insufficient_balance');
      assert.deepEqual(await walletFigures(api, poor), before);
      assert.equal((await api.db.query(`SELECT 1 FROM audio_task WHERE api_key_id = $1`, [poor.keyId])).length, 0);
    });
  });
});
