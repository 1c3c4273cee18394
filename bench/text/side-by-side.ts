// Text benchmark, two builds side by side (`npm run bench:sides`; docs/benchmarks.md › Text ›
// Optimisation 8). On a shared 2-core machine absolute figures move with the neighbours' load;
// alternating the two builds under the same light load, round after round, shows what a change
// does to our gateway's CPU per request and peak RSS.
//
//   npm run bench:sides      (builds this tree into .build/textbench and BEFORE_REF, default
//                             `main`, into .build/textbench-before, then runs this file)
//
// Each round runs `bench/text/run.js` of the "before" build, then of the "after" build (the order
// swaps every round), ours alone (SKIP_PORTKEY=1, no creations), with the knobs below passed on,
// and reads the result file each run writes. Knobs: ROUNDS (3), and run.ts's own: CONNS (32),
// DUR (5), WARM (2), MODES ("nonstream stream"), PROBE_N (200), PROBE_STREAM_N (50), CREATIONS
// ("": none; "video audio" adds the creation loads, each a row of its own).
// BEFORE_DIR / AFTER_DIR point at other builds. Prints one table; writes nothing else.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = process.cwd();
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BUILDS = { before: resolve(process.env.BEFORE_DIR ?? join(ROOT, '.build/textbench-before')), after: resolve(process.env.AFTER_DIR ?? join(ROOT, '.build/textbench')) };
const OUT_DIR = join(ROOT, 'bench/results/text');

interface Row {
  target: string;
  mode: string;
  conns: number;
  rps: number;
  cpuUsPerReq: number | null;
  sysUsPerReq: number | null;
  pgCpuUsPerReq: number | null;
  peakRssMb: number | null;
}
interface Probe {
  gateway: string;
  mode: string;
  addedP50: number;
  addedTtfbP50: number;
}
interface Result {
  environment: Record<string, string>;
  rows: Row[];
  probes: Probe[];
}

const latest = (): string | null => {
  if (!existsSync(OUT_DIR)) return null; // a fresh checkout: no run wrote there yet
  const files = readdirSync(OUT_DIR).filter((name) => name.endsWith('.json')).sort();
  return files.length ? join(OUT_DIR, files[files.length - 1]!) : null;
};

function runOnce(build: string): Result {
  const before = latest();
  const env = {
    ...process.env,
    SKIP_PORTKEY: '1',
    CREATIONS: process.env.CREATIONS ?? '',
    CONNS: process.env.CONNS ?? '32',
    DUR: process.env.DUR ?? '5',
    MODES: process.env.MODES ?? 'nonstream stream',
    PROBE_N: process.env.PROBE_N ?? '200',
    PROBE_STREAM_N: process.env.PROBE_STREAM_N ?? '50',
  };
  const run = spawnSync(process.execPath, [join(build, 'bench/text/run.js')], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`${build}: bench exited with ${run.status}`);
  const file = latest();
  if (!file || file === before) throw new Error(`${build}: no result file written`);
  return JSON.parse(readFileSync(file, 'utf8')) as Result;
}

const results: Record<'before' | 'after', Result[]> = { before: [], after: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order: Array<'before' | 'after'> = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  for (const side of order) {
    process.stderr.write(`round ${round + 1}/${ROUNDS}: ${side} (${BUILDS[side]})\n`);
    results[side].push(runOnce(BUILDS[side]));
  }
}

const fmt = (value: number | null | undefined, digits = 0) => (value === null || value === undefined ? '–' : value.toFixed(digits));
/** Our gateway's rows: text loads (`ours`) and task creations (`video-creations`, …). */
const ours = (result: Result) => result.rows.filter((row) => row.target === 'ours' || row.target.endsWith('-creations'));
const keyOf = (row: Row) => `${row.target === 'ours' ? row.mode : row.target}|${row.conns}`;
const keys = ours(results.before[0]!).map(keyOf);
const lines = ['| mode | clients | figure | before (per round) | after (per round) | after / before (medians) |', '|---|---|---|---|---|---|'];
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : NaN;
};
const figures: Array<[string, (row: Row) => number | null]> = [
  ['gateway CPU µs/req', (row) => row.cpuUsPerReq],
  ['of which sys', (row) => row.sysUsPerReq],
  ['PostgreSQL CPU µs/req', (row) => row.pgCpuUsPerReq],
  ['req/s', (row) => row.rps],
  ['peak RSS MB', (row) => row.peakRssMb],
];
for (const key of keys) {
  const [mode, conns] = key.split('|');
  for (const [name, pick] of figures) {
    const values = (side: 'before' | 'after') => results[side].map((result) => pick(ours(result).find((row) => keyOf(row) === key)!) ?? NaN);
    const before = values('before');
    const after = values('after');
    lines.push(`| ${mode} | ${conns} | ${name} | ${before.map((v) => fmt(v)).join(' / ')} | ${after.map((v) => fmt(v)).join(' / ')} | ${fmt(median(after) / median(before), 2)}× |`);
  }
}
for (const mode of ['nonstream', 'stream']) {
  const pick = (result: Result) => result.probes.find((probe) => probe.gateway === 'ours' && probe.mode === mode);
  const show = (side: 'before' | 'after') => results[side].map((result) => fmt((mode === 'stream' ? pick(result)?.addedTtfbP50 : pick(result)?.addedP50)! / 1000, 2)).join(' / ');
  if (results.before.some(pick)) lines.push(`| ${mode} | 1 | added ${mode === 'stream' ? 'TTFB' : 'p50'} ms | ${show('before')} | ${show('after')} | |`);
}
const loads = (side: 'before' | 'after') => results[side].map((result) => result.environment['load average at start']?.split(' ')[0] ?? '?').join(' / ');
console.log(`Side by side, ${ROUNDS} rounds, alternating (load average at each start: before ${loads('before')}; after ${loads('after')})\n`);
console.log(lines.join('\n'));
