// Audio benchmark on the sandbox with zero latency (issue 11):
//   1. task creations per second at 32 concurrent clients (validate + voice + idempotency row +
//      hold + row + job, an Idempotency-Key on every request), API role only;
//   2. completed tasks per second through one worker process (300-character speech, MP3 via ffmpeg);
//   3. streaming speech: time to the first audio byte, p50 / p99, at 1 and at 32 clients.
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:audio (builds into dist/ first).
// Knobs: BENCH_CREATIONS (default 2000), BENCH_CLIENTS (32), BENCH_COMPLETIONS (48), BENCH_STREAMS (200).
import { randomUUID } from 'node:crypto';
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';
import { waitForFinishedTasks } from '../support/completions.js';
import { type CallResult, describeMachine, drive, percentile as pct, runBench } from '../support/drive.js';

const CREATIONS = Number(process.env.BENCH_CREATIONS ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32);
const COMPLETIONS = Number(process.env.BENCH_COMPLETIONS ?? 48);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);
// Creations are measured without a worker: nothing drains the pending tasks, so lift the per-key limit.
const ENV = { LOG_LEVEL: 'silent', AUDIO_MAX_PENDING_PER_KEY: '1000000' };
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(7).slice(0, 300);

async function firstVoice(t: TestApp, key: string): Promise<string> {
  const response = await t.request('/v1/audio/voice-library?page=0', { key });
  const page = (await response.json()) as { voices: Array<{ id: string; models: string[] }> };
  const voice = page.voices.find((v) => v.models.includes('voice_v4'));
  if (!voice) throw new Error(`no voice for voice_v4 in the library (${response.status})`);
  return voice.id;
}

function create(t: TestApp, key: string, body: object): () => Promise<CallResult> {
  return async () => {
    const t0 = performance.now();
    const response = await t.request('/v1/audio/generations', { method: 'POST', key, json: body, headers: { 'idempotency-key': randomUUID() } });
    await response.arrayBuffer();
    return { ok: response.status === 200, ms: performance.now() - t0 };
  };
}

/** Time to the first body byte of a streaming speech request (the rest is read to the end). */
function stream(t: TestApp, key: string, body: object): () => Promise<CallResult> {
  return async () => {
    const t0 = performance.now();
    const response = await t.request('/v1/audio/speech', { method: 'POST', key, json: body });
    const reader = response.body!.getReader();
    const first = await reader.read();
    const ms = performance.now() - t0;
    while (!(await reader.read()).done);
    return { ok: response.status === 200 && !first.done, ms };
  };
}

async function main(): Promise<void> {
  console.log(describeMachine());

  // 1. Creations: API role only, so no worker competes for the CPU.
  const api = await bootTestApp({ label: 'benchaudio', env: { ...ENV, APP_ROLE: 'api' } });
  try {
    const account = await createAccount(api, { creditUsd: 1_000_000 });
    const body = { model: 'voice_v4', mode: 'text_to_speech', prompt: TEXT, controls: { voiceId: await firstVoice(api, account.key), outputFormat: 'mp3_44100_128' } };
    await drive(200, CLIENTS, create(api, account.key, body)); // warm-up
    const run = await drive(CREATIONS, CLIENTS, create(api, account.key, body));
    console.log(
      `creations: ${CREATIONS} tasks, ${CLIENTS} concurrent clients, Idempotency-Key on: ${(CREATIONS / run.seconds).toFixed(0)} tasks/s ` +
        `(p50 ${pct(run.latencies, 50).toFixed(1)} ms, p99 ${pct(run.latencies, 99).toFixed(1)} ms, ${run.failures} failures)`,
    );
  } finally {
    await api.close();
  }

  // 2. Completions: tasks are created first, then one worker process drains them.
  const front = await bootTestApp({ label: 'benchaudio2', env: { ...ENV, APP_ROLE: 'api' } });
  try {
    const account = await createAccount(front, { creditUsd: 1_000_000 });
    const body = { model: 'voice_v4', mode: 'text_to_speech', prompt: TEXT, controls: { voiceId: await firstVoice(front, account.key), outputFormat: 'mp3_44100_128' } };
    await drive(COMPLETIONS, CLIENTS, create(front, account.key, body));
    const started = performance.now();
    const worker = await bootTestApp({ label: 'benchaudiow', db: front.db, env: { ...ENV, APP_ROLE: 'worker', QUEUE_PREFIX: front.queuePrefix, MEDIA_DIR: front.mediaDir } });
    try {
      const failed = await waitForFinishedTasks(front.db, 'audio_task', COMPLETIONS);
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `completions: ${COMPLETIONS} tasks (300 characters, ~20 s of MP3 each) through one worker: ${(COMPLETIONS / seconds).toFixed(2)} tasks/s ` +
          `(${seconds.toFixed(1)} s incl. worker boot, ${failed} failed)`,
      );
    } finally {
      await worker.close();
    }
  } finally {
    await front.close();
  }

  // 3. Streaming speech: one process in the `all` role (the stream runs in the API process).
  const app = await bootTestApp({ label: 'benchaudio3', env: { ...ENV, APP_ROLE: 'all' } });
  try {
    const account = await createAccount(app, { creditUsd: 1_000_000 });
    const voiceId = await firstVoice(app, account.key);
    for (const format of ['mp3_44100_128', 'pcm_24000'] as const) {
      const body = { model: 'voice_v4', prompt: 'Hello there, this is a short sentence.', controls: { voiceId, outputFormat: format } };
      await drive(20, 4, stream(app, account.key, body)); // warm-up
      for (const clients of [1, 32]) {
        const run = await drive(STREAMS, clients, stream(app, account.key, body));
        console.log(
          `streaming speech ${format}, ${clients} client(s), ${STREAMS} streams: first byte p50 ${pct(run.latencies, 50).toFixed(1)} ms, ` +
            `p99 ${pct(run.latencies, 99).toFixed(1)} ms (${run.failures} failures)`,
        );
      }
    }
  } finally {
    await app.close();
  }
}

runBench(main);
