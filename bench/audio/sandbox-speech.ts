// Sandbox audio benchmark (docs/audio.md › Sandbox audio): how long the longest request
// (2,000 characters, 133 s of speech) takes in each format, how soon a stream's first chunk
// leaves, and the longest the event loop waited meanwhile. No database, no server.
//
//   npm run build --silent && node dist/bench/audio/sandbox-speech.js
//
// Knobs: BENCH_RUNS (3). Figures are from a shared machine: read them as orders of magnitude.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  type AudioOutputFormat,
  bundledFfmpegPath,
  SANDBOX_VOICES,
  SandboxAudioProvider,
  type SpeechJobSpec,
} from '../../libs/providers/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const sandbox = new SandboxAudioProvider({ ffmpegPath: bundledFfmpegPath() });
const text = 'Streaming speech arrives while it is made. '.repeat(47).slice(0, 2000);

const job = (outputFormat: AudioOutputFormat): SpeechJobSpec => ({
  taskId: 'audio:00000000-0000-4000-8000-000000000000',
  model: 'voice_v4',
  mode: 'text_to_speech',
  inputs: [{ text, voiceId: SANDBOX_VOICES[0]!.id }],
  outputFormat,
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(name: string, run: () => Promise<number | void>): Promise<void> {
  const totals: number[] = [];
  const firsts: number[] = [];
  const lags: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    const first = await run();
    totals.push(performance.now() - started);
    delay.disable();
    lags.push(delay.max / 1e6);
    if (typeof first === 'number') firsts.push(first - started);
  }
  const firstChunk = firsts.length ? `, first chunk ${median(firsts).toFixed(0)} ms` : '';
  console.log(`${name}: ${median(totals).toFixed(0)} ms${firstChunk}, longest event-loop wait ${median(lags).toFixed(1)} ms (median of ${RUNS})`);
}

async function stream(format: AudioOutputFormat): Promise<number> {
  const outcome = await sandbox.stream(job(format));
  if (outcome.kind !== 'streaming') throw new Error(`stream answered ${outcome.kind}`);
  let first = 0;
  for await (const chunk of outcome.stream.chunks) if (!first && chunk.length > 0) first = performance.now();
  return first;
}

console.log(`2,000 characters (133 s of speech), ${RUNS} runs each`);
await measure('synthesize pcm_24000', async () => void (await sandbox.synthesize(job('pcm_24000'))));
await measure('synthesize mp3_44100_128', async () => void (await sandbox.synthesize(job('mp3_44100_128'))));
await measure('stream pcm_24000', () => stream('pcm_24000'));
await measure('stream mp3_44100_128', () => stream('mp3_44100_128'));
