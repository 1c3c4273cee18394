// Image benchmark (issue 13), in one process with the app (as bench:audio does):
//   1. sandbox generations (svc_test_ key, 1K at 1:1, a fresh prompt each time so no PNG is reused):
//      generations per second and latency p50 / p99 at 1 and at 16 concurrent clients;
//   2. the gateway's added latency at one client: the live gemini-image adapter against the fake
//      Gemini image server (test/fakes), p50 / p99 through the gateway minus the same calls made
//      straight to the fake. The added time is validation, hold, the upstream call's JSON and
//      Base64 work, storing the PNG, the public link, settlement and the answer.
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:images.
// Knobs: BENCH_IMAGES (generations per sandbox run, default 200), BENCH_OVERHEAD_CALLS (300).
import { cpus } from 'node:os';
import { createAccount } from '../../test/support/factories.js';
import { FakeGeminiImageServer } from '../../test/fakes/gemini-image-server.js';
import { bootTestApp, type TestApp } from '../../test/support/test-app.js';

const IMAGES = Number(process.env.BENCH_IMAGES ?? 200);
const OVERHEAD_CALLS = Number(process.env.BENCH_OVERHEAD_CALLS ?? 300);
const GENERATIONS = '/api/svc/v1/images/generations';

const pct = (values: number[], p: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;
const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** Runs `total` calls over `clients` concurrent loops; returns the latencies in ms. */
async function drive(total: number, clients: number, call: (i: number) => Promise<boolean>): Promise<{ seconds: number; failures: number; latencies: number[] }> {
  let next = 0;
  let failures = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        if (!(await call(i))) failures++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures, latencies };
}

function generation(t: TestApp, key: string, model: string, prompt: (i: number) => string): (i: number) => Promise<boolean> {
  return async (i) => {
    const response = await t.request(GENERATIONS, { method: 'POST', key, json: { model, prompt: prompt(i), controls: { size: '1K', aspectRatio: '1:1' } } });
    await response.arrayBuffer();
    return response.status === 200;
  };
}

async function sandbox(): Promise<void> {
  const t = await bootTestApp({ label: 'benchimages', env: { LOG_LEVEL: 'silent' } });
  try {
    const account = await createAccount(t, { creditUsd: 100_000, environment: 'test' });
    const call = generation(t, account.key, 'vendor-3.1-flash-image', (i) => `benchmark picture number ${i} ${Math.random()}`);
    await drive(8, 1, call); // warm-up: sharp, pools, JIT
    for (const clients of [1, 16]) {
      const run = await drive(IMAGES, clients, call);
      console.log(
        `sandbox 1K 1:1, ${String(clients).padStart(2)} client(s): ${(IMAGES / run.seconds).toFixed(1)} generations/s, ` +
          `p50 ${ms(pct(run.latencies, 50))}, p99 ${ms(pct(run.latencies, 99))}, failures ${run.failures}`,
      );
    }
  } finally {
    await t.close();
  }
}

async function overhead(): Promise<void> {
  const fake = await new FakeGeminiImageServer().start();
  fake.record = false;
  const t = await bootTestApp({ label: 'benchimagesgw', env: { LOG_LEVEL: 'silent', GEMINI_API_KEY: 'fake-gemini-key', GEMINI_BASE_URL: fake.url } });
  try {
    const account = await createAccount(t, { creditUsd: 100_000, environment: 'live' });
    const body = JSON.stringify({
      contents: [{ role: 'user', parts: [{ text: 'a benchmark picture' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '1:1', imageSize: '1K' } },
    });
    const direct = async (): Promise<boolean> => {
      const response = await fetch(`${fake.url}/v1beta/models/gemini-3.1-flash-image-preview:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'fake-gemini-key' },
        body,
      });
      await response.arrayBuffer();
      return response.status === 200;
    };
    const gateway = generation(t, account.key, 'vendor-3.1-flash-image', () => 'a benchmark picture');
    await drive(20, 1, direct);
    await drive(20, 1, gateway);
    const upstream = await drive(OVERHEAD_CALLS, 1, direct);
    const through = await drive(OVERHEAD_CALLS, 1, gateway);
    console.log(`fake upstream direct, 1 client: p50 ${ms(pct(upstream.latencies, 50))}, p99 ${ms(pct(upstream.latencies, 99))}`);
    console.log(`through the gateway,  1 client: p50 ${ms(pct(through.latencies, 50))}, p99 ${ms(pct(through.latencies, 99))}, failures ${through.failures}`);
    console.log(
      `gateway added latency, 1 client: p50 ${ms(pct(through.latencies, 50) - pct(upstream.latencies, 50))}, ` +
        `p99 ${ms(pct(through.latencies, 99) - pct(upstream.latencies, 99))}`,
    );
  } finally {
    await t.close();
    await fake.stop();
  }
}

console.log(`bench:images on ${cpus().length} CPU(s) (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`);
await sandbox();
await overhead();
