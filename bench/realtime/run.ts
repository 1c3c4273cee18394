// Realtime benchmark on the sandbox (issue 15), against one API process of its own (a child
// process, so its memory is measured alone):
//   1. concurrent authenticated sessions held, with the process's RSS per session
//      (target: 2,000 sessions under 300 MB RSS);
//   2. turns per second and time from turn.commit to the first audio.delta, p50 / p99, at 1, 50
//      and 200 concurrent sessions (each session commits its turns one after the other).
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:realtime (builds first).
// Knobs: BENCH_SESSIONS (default 2000), BENCH_TURNS (turns per run, default 200; 50 for the single session).
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { deleteQueueKeys, TEST_ADMIN_TOKEN, TEST_REDIS_URL } from '../../test/support/test-app.js';
import { createTestDatabase } from '../../test/support/test-database.js';
import { type CallResult, describeMachine, drive, percentile as pct, runBench } from '../support/drive.js';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 2000);
const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const TEXT = 'Hello there, this is a short realtime turn.';
const here = dirname(fileURLToPath(import.meta.url));

interface Api {
  child: ChildProcess;
  baseUrl: string;
  request(path: string, init?: { method?: string; json?: unknown; key?: string; admin?: boolean }): Promise<Response>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startApi(env: Record<string, string>): Promise<Api> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const childEnv = { NODE_ENV: 'test', PORT: String(port), PUBLIC_BASE_URL: baseUrl, REDIS_URL: TEST_REDIS_URL, ADMIN_TOKEN: TEST_ADMIN_TOKEN, LOG_LEVEL: 'silent', DEMO_SEED: 'false', ...env };
  const child = fork(join(here, '..', '..', 'test', 'audio', 'support', 'speech-api-child.js'), [], { env: { ...process.env, SVC_CHILD_ENV: JSON.stringify(childEnv) }, stdio: 'inherit' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`API child exited early (${code})`)));
  });
  return {
    child,
    baseUrl,
    request: (path, init = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
          ...(init.admin ? { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } : {}),
        },
        ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
      }),
  };
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A workspace with a test key and a large test balance, through the admin API. */
async function fundedKey(api: Api): Promise<string> {
  const workspace = (await (await api.request('/admin/v1/workspaces', { method: 'POST', admin: true, json: { name: 'bench' } })).json()) as { id: string };
  const issued = await api.request(`/admin/v1/workspaces/${workspace.id}/api-keys`, { method: 'POST', admin: true, json: { name: 'bench', environment: 'test' } });
  const { key } = (await issued.json()) as { key: string };
  const credit = await api.request(`/admin/v1/workspaces/${workspace.id}/wallet/credits`, { method: 'POST', admin: true, json: { amountUsd: 100_000, reference: `bench-${workspace.id}`, environment: 'test' } });
  if (credit.status !== 200) throw new Error(`credit: ${credit.status} ${await credit.text()}`);
  return key;
}

async function voiceOf(api: Api, key: string): Promise<string> {
  const page = (await (await api.request('/v1/audio/voice-library?page=0', { key })).json()) as { voices: Array<{ id: string; models: string[] }> };
  return page.voices.find((v) => v.models.includes('voice_v4_turbo'))!.id;
}

/** An authenticated connection: resolves on session.ready. */
function connect(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => ws.send(JSON.stringify({ type: 'session.authenticate', token })));
    ws.once('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string };
      if (frame.type === 'session.ready') resolve(ws);
      else reject(new Error(`first frame ${frame.type}`));
    });
    ws.once('close', (code) => reject(new Error(`closed ${code}`)));
    ws.once('error', reject);
  });
}

/** One turn on a ready connection: ms to the first audio.delta (the turn is read to its end). */
function turn(ws: WebSocket, turnId: string): Promise<CallResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let first = -1;
    const onMessage = (data: WebSocket.RawData): void => {
      const frame = JSON.parse(data.toString()) as { type: string };
      if (frame.type === 'audio.delta' && first < 0) first = performance.now() - t0;
      if (frame.type === 'turn.completed' || frame.type === 'turn.status' || frame.type === 'error') {
        ws.off('message', onMessage);
        resolve({ ok: frame.type === 'turn.completed' && first >= 0, ms: first });
      }
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ type: 'turn.commit', turnId, text: TEXT }));
  });
}

async function openSessions(api: Api, key: string, voiceId: string, count: number): Promise<Array<{ url: string; token: string }>> {
  const sessions: Array<{ url: string; token: string }> = [];
  await drive(count, 32, async () => {
    const t0 = performance.now();
    const answer = await api.request('/v1/audio/realtime/sessions', { method: 'POST', key, json: { model: 'voice_v4_turbo', controls: { voiceId }, maxCostUsd: 10 } });
    const body = (await answer.json()) as { url: string; token: string };
    if (answer.status === 200) sessions.push({ url: body.url, token: body.token });
    return { ok: answer.status === 200, ms: performance.now() - t0 };
  });
  if (sessions.length !== count) throw new Error(`opened ${sessions.length} of ${count} sessions`);
  return sessions;
}

async function main(): Promise<void> {
  console.log(describeMachine());
  const db = await createTestDatabase('benchrealtime');
  const queuePrefix = `b${randomBytes(5).toString('hex')}`;
  const mediaDir = mkdtempSync(join(tmpdir(), 'svc-bench-media-'));
  const api = await startApi({
    APP_ROLE: 'api',
    DATABASE_URL: db.url,
    DATABASE_CREATE_IF_MISSING: 'false',
    QUEUE_PREFIX: queuePrefix,
    MEDIA_DIR: mediaDir,
    REALTIME_MAX_SESSIONS_PER_KEY: '100000',
    REALTIME_MAX_CONNECTIONS: '100000',
    AUDIO_MAX_PENDING_PER_KEY: '100000',
  });
  const sockets: WebSocket[] = [];
  try {
    const key = await fundedKey(api);
    const voiceId = await voiceOf(api, key);

    // 1. Sessions held.
    const sessions = await openSessions(api, key, voiceId, SESSIONS);
    global.gc?.();
    const baseline = rssMb(api.child.pid!);
    const t0 = performance.now();
    for (let i = 0; i < sessions.length; i += 100) {
      sockets.push(...(await Promise.all(sessions.slice(i, i + 100).map((s) => connect(s.url, s.token)))));
    }
    const connectSeconds = (performance.now() - t0) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const held = rssMb(api.child.pid!);
    console.log(
      `sessions: ${sockets.length} authenticated connections held by one API process (connected in ${connectSeconds.toFixed(1)} s): ` +
        `RSS ${held.toFixed(0)} MB (${baseline.toFixed(0)} MB before connecting), ${(((held - baseline) * 1024) / sockets.length).toFixed(1)} KB per session`,
    );

    // 2. Turns at 1, 50 and 200 concurrent sessions, on sessions already connected.
    for (const concurrent of [1, 50, 200]) {
      const group = sockets.slice(0, concurrent);
      // One session commits its turns one after another: 50 are enough for its percentiles.
      const perSession = Math.max(2, Math.ceil((concurrent === 1 ? Math.min(50, TURNS) : TURNS) / concurrent));
      const latencies: number[] = [];
      let failures = 0;
      const started = performance.now();
      await Promise.all(
        group.map(async (ws, index) => {
          for (let i = 0; i < perSession; i++) {
            const result = await turn(ws, `c${concurrent}-s${index}-t${i}`);
            if (result.ok) latencies.push(result.ms);
            else failures++;
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const total = perSession * concurrent;
      console.log(
        `turns at ${concurrent} concurrent session(s): ${total} turns (${TEXT.length} characters, ~${(TEXT.length / 15).toFixed(1)} s of PCM each) in ${seconds.toFixed(1)} s = ` +
          `${(total / seconds).toFixed(1)} turns/s; first audio.delta p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms (${failures} failures)`,
      );
    }
  } finally {
    for (const ws of sockets) ws.terminate();
    api.child.kill('SIGTERM');
    await new Promise((resolve) => api.child.once('exit', resolve));
    await deleteQueueKeys(queuePrefix);
    await db.drop();
    rmSync(mediaDir, { recursive: true, force: true });
  }
}

runBench(main);
