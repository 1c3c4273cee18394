// The gateway benchmark (`npm run bench`, issues 4 and 17; docs/benchmarks.md › Text and
// › All targets): text, then video and audio task creations, in one run on one gateway process.
// Text: our POST /api/svc/v1/chat/completions
// (sync and stream, auth + wallet hold + settle on, LIVE Gemini adapter) against an instant fake
// Gemini upstream, and — in the same run, side by side — Portkey's gateway against the anchor's
// instant fake OpenAI upstream (../shared/bench/portkey-anchor). Every process runs on loopback:
//   fake Gemini ─ our gateway (forked, own DB)      fake OpenAI ─ Portkey (node -r bind-loopback)
// and this process drives the load (autocannon, as the anchor does) and the one-client probes.
//
//   npm run bench            (builds into .build/textbench, then runs this file: text + creations)
//   npm run bench:text       (the same, text only: CREATIONS="")
//
// Creations: POST /v1/contents/generations/tasks (video) and POST /v1/audio/generations with a new
// Idempotency-Key on every request, at the first CONNS figure (32), on a test-mode key (sandbox, no
// worker), each compared with the same run's sync text req/s at that client count.
//
// Needs local PostgreSQL and Redis as the tests do (TEST_DATABASE_SERVER_URL, TEST_REDIS_URL).
// Portkey is installed once into .build/portkey-anchor (a copy of the anchor folder, never inside
// shared/). Knobs: DUR (8 s per load), WARM (2 s), PREWARM (10 s: one unmeasured sync load per
// gateway first, then ANALYZE of our database), CREATION_PREWARM (2 s, the same before each
// creation kind), BENCH_AUDIO_KEYS (1: audio creations on one key with the pending limit lifted;
// N: rotated over N test keys under the default limit), CONNS ("32 64"), MODES ("nonstream stream"),
// PROBE_N (1000), PROBE_STREAM_N (200), BENCH_LOG_LEVEL (warn), BENCH_MODEL (vendor-3.7-flash),
// BENCH_ACCOUNTS (1 = every request on one wallet row; N rotates requests over N workspaces),
// PORTKEY_ANCHOR_DIR, PORTKEY_DIR, SKIP_PORTKEY=1, BENCH_CPU_PROF=1 (a CPU profile of our gateway
// over each measured load of ours, text and creations, into bench/results/text/prof/
// <time>-<load>.cpuprofile, each with a .md of where its time goes, bench/support/cpu-profile.ts;
// the profiler costs CPU, so a profiled run's figures are not the gateway's), BENCH_TIMEOUT_S
// (900), CREATIONS ("video audio"; "" skips them),
// API_KEY_CACHE_TTL_MS (the gateway's; 0 turns its key cache off, to compare), BENCH_ROUNDS (1:
// the loads, creations and probes once; N: N times on the same processes, each round's tables
// printed, and the targets judged on the median of the N rounds' ratios, which a run-to-run spread
// of ±10% on this kind of host otherwise flips for figures near their line).
// Results: bench/results/text/<time>.{json,md}.
import autocannon, { type Result } from 'autocannon';
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type CpuProfile, profileMarkdown, summarizeCpuProfile } from '../support/cpu-profile.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = process.cwd();
const DUR = Number(process.env.DUR ?? 8);
const WARM = Number(process.env.WARM ?? 2);
const PREWARM = Number(process.env.PREWARM ?? 10);
/** Seconds of unmeasured creations of each kind before its load, then ANALYZE (0 turns it off). */
const CREATION_PREWARM = Number(process.env.CREATION_PREWARM ?? 2);
const CONNS = (process.env.CONNS ?? '32 64').split(/\s+/).filter(Boolean).map(Number);
const MODES = (process.env.MODES ?? 'nonstream stream').split(/\s+/).filter(Boolean) as Array<'nonstream' | 'stream'>;
const PROBE_N = Number(process.env.PROBE_N ?? 1000);
const PROBE_STREAM_N = Number(process.env.PROBE_STREAM_N ?? 200);
const MODEL = process.env.BENCH_MODEL ?? 'vendor-3.7-flash';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn';
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 1);
const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 900);
const ANCHOR_DIR = resolve(process.env.PORTKEY_ANCHOR_DIR ?? join(ROOT, '../shared/bench/portkey-anchor'));
const PORTKEY_DIR = resolve(process.env.PORTKEY_DIR ?? join(ROOT, '.build/portkey-anchor'));
const OUT_DIR = join(ROOT, 'bench/results/text');
const STAMP = new Date().toISOString().replace(/[:.]/g, '-');

/** Rounds of the measurement on the same processes; the targets are judged on the medians. */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));

const CREATIONS = (process.env.CREATIONS ?? 'video audio').split(/\s+/).filter(Boolean) as Array<'video' | 'audio'>;

/** Issue 17's targets: ratios to Portkey (or to the same run's text figures) measured side by side. */
const TARGETS = {
  rpsRatio: 3,
  /** Our one-client added p50 (sync) and added TTFB (stream), each over Portkey's sync added p50. */
  addedRatio: 1,
  cpuRatio: { nonstream: 0.2, stream: 0.3 },
  rssRatio: 1,
  rssMb: 250,
  /** Creations/s at the first client count over the same run's sync text req/s there. */
  creationRatio: 0.75,
};

// ---------------------------------------------------------------- processes

interface Proc {
  name: string;
  child: ChildProcess;
}
const procs: Proc[] = [];
let gatewayDb: string | null = null;
let gatewayChild: ChildProcess | null = null;

function logFile(name: string): number {
  mkdirSync(join(OUT_DIR, 'logs'), { recursive: true });
  return openSync(join(OUT_DIR, 'logs', `${name}.log`), 'w');
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.on('error', rej);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => res(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function startNode(name: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Proc {
  const fd = logFile(name);
  const child = spawn(process.execPath, args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, stdio: ['ignore', fd, fd] });
  const proc = { name, child };
  procs.push(proc);
  return proc;
}

async function waitHttp(url: string, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status < 500) return;
    } catch {
      // not up yet
    }
    await sleep(200);
  }
  throw new Error(`${what} did not come up at ${url} within ${timeoutMs} ms (see ${OUT_DIR}/logs)`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface GatewayInfo {
  url: string;
  key: string;
  keys: string[];
  /** A test-mode key (sandbox) with credit, for the creation loads. */
  testKey: string;
  /** The test-mode keys audio creations rotate over (BENCH_AUDIO_KEYS; the first is testKey). */
  audioKeys: string[];
  database: string;
}

async function startGateway(geminiUrl: string): Promise<{ proc: Proc; info: GatewayInfo }> {
  const fd = logFile('gateway');
  // Node flags of our gateway process; the default is what `npm start` runs with (package.json).
  const execArgv: string[] = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = fork(join(HERE, 'gateway.js'), [], {
    cwd: ROOT,
    execArgv,
    env: { ...process.env, BENCH_GEMINI_URL: geminiUrl, BENCH_LOG_LEVEL: LOG_LEVEL, BENCH_ACCOUNTS: String(ACCOUNTS) },
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  const proc = { name: 'gateway', child };
  procs.push(proc);
  gatewayChild = child;
  const info = await new Promise<GatewayInfo>((res, rej) => {
    const timer = setTimeout(() => rej(new Error('our gateway did not boot within 60 s (see logs/gateway.log)')), 60_000);
    child.once('message', (m: { ready: boolean; error?: string } & GatewayInfo) => {
      clearTimeout(timer);
      if (m.ready) res(m);
      else rej(new Error(`our gateway failed to boot: ${m.error}`));
    });
    child.once('exit', (code) => rej(new Error(`our gateway exited during boot (code ${code}; see logs/gateway.log)`)));
  });
  gatewayDb = info.database;
  return { proc, info };
}

async function stopAll(): Promise<void> {
  const exits = procs.map(
    ({ name, child }) =>
      new Promise<void>((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        const kill = setTimeout(() => {
          console.error(`${name} did not stop in time: SIGKILL`);
          child.kill('SIGKILL');
        }, 20_000);
        child.once('exit', () => {
          clearTimeout(kill);
          res();
        });
        if (name === 'gateway' && child.connected) child.send('stop');
        else child.kill('SIGTERM');
      }),
  );
  await Promise.all(exits);
  // The gateway drops its database on stop; if it was killed, drop it here.
  if (gatewayDb) {
    const server = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';
    const client = new pg.Client({ connectionString: `${server}/postgres` });
    try {
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${gatewayDb} WITH (FORCE)`);
    } catch (error) {
      console.error(`could not drop ${gatewayDb}: ${String(error)}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

// ---------------------------------------------------------------- /proc figures

function cpuTicks(pid: number): number {
  const { user, sys } = cpuSplit(pid);
  return user + sys;
}
function cpuSplit(pid: number): { user: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]), sys: Number(fields[12]) }; // utime, stime (fields 14, 15)
  } catch {
    return { user: 0, sys: 0 }; // the process is gone
  }
}
/** ANALYZE of our gateway's database: what autovacuum does within a new database's first minute. */
async function analyzeDatabase(database: string): Promise<void> {
  const server = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const client = new pg.Client({ connectionString: `${server}/${database}` });
  try {
    await client.connect();
    await client.query('ANALYZE');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The backends serving `database` now, with their CPU ticks so far. */
async function pgBackendTicks(database: string): Promise<Map<number, number>> {
  const server = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  try {
    await client.connect();
    const rows = (await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows;
    return new Map(rows.map(({ pid }) => [pid, cpuTicks(pid)]));
  } catch {
    return new Map();
  } finally {
    await client.end().catch(() => undefined);
  }
}
/**
 * CPU ticks the backends spent between two samples: a backend started in between counts whole, one
 * that exited in between cannot be read (its ticks are lost, never subtracted: the figure was
 * negative when a pooled connection closed during the load).
 */
function pgTicksBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, now] of after) ticks += Math.max(0, now - (before.get(pid) ?? 0));
  return ticks;
}
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

// ---------------------------------------------------------------- Portkey

function preparePortkey(): string | null {
  if (process.env.SKIP_PORTKEY) return null;
  const entry = join(PORTKEY_DIR, 'node_modules/@portkey-ai/gateway/build/start-server.js');
  if (existsSync(entry)) return PORTKEY_DIR;
  if (!existsSync(join(ANCHOR_DIR, 'package.json'))) {
    console.warn(`Portkey anchor not found at ${ANCHOR_DIR} (set PORTKEY_ANCHOR_DIR): Portkey is not measured`);
    return null;
  }
  console.log(`installing the Portkey anchor into ${PORTKEY_DIR} (once) …`);
  mkdirSync(PORTKEY_DIR, { recursive: true });
  cpSync(ANCHOR_DIR, PORTKEY_DIR, { recursive: true });
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: PORTKEY_DIR, stdio: 'inherit', timeout: 300_000 });
  if (npm.status !== 0 || !existsSync(entry)) {
    console.warn('npm install of the Portkey anchor failed: Portkey is not measured');
    return null;
  }
  return PORTKEY_DIR;
}

// ---------------------------------------------------------------- load

interface Target {
  name: 'ours' | 'portkey' | 'gemini-direct' | 'openai-direct' | 'video-creations' | 'audio-creations';
  url: string;
  headers: Record<string, string>;
  body: (stream: boolean) => string;
  pid: number | null; // the gateway process measured (null for an upstream hit directly)
  /** Several API keys (BENCH_ACCOUNTS > 1): requests rotate over them, one workspace per key. */
  keys?: string[];
  /** A new Idempotency-Key on every request (audio creations). */
  idempotent?: boolean;
}

type LoadMode = 'nonstream' | 'stream' | 'create';

interface LoadRow {
  target: Target['name'];
  mode: LoadMode;
  conns: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  total: number;
  failures: number;
  cpuUsPerReq: number | null;
  /** Of which in the kernel (system time). */
  sysUsPerReq: number | null;
  /** CPU of the PostgreSQL backends serving our database, per request (ours only). */
  pgCpuUsPerReq: number | null;
  peakRssMb: number | null;
}

/** autocannon's options for a target: its keys rotated and a new Idempotency-Key per request where it asks for them. */
function loadOptions(target: Target, mode: LoadMode, conns: number): Parameters<typeof autocannon>[0] {
  const options: Parameters<typeof autocannon>[0] = { url: target.url, method: 'POST', headers: target.headers, body: target.body(mode === 'stream'), connections: conns, timeout: 30 };
  const keys = target.keys ?? [];
  if (keys.length > 1 || target.idempotent) {
    let next = 0;
    options.requests = [
      {
        setupRequest: (request) => ({
          ...request,
          headers: {
            ...request.headers,
            ...(keys.length > 1 ? { authorization: `Bearer ${keys[next++ % keys.length]}` } : {}),
            ...(target.idempotent ? { 'idempotency-key': randomUUID() } : {}),
          },
        }),
      },
    ];
  }
  return options;
}

// ---------------------------------------------------------------- profiles (BENCH_CPU_PROF=1)

const PROFILE = Boolean(process.env.BENCH_CPU_PROF);
const PROF_DIR = join(OUT_DIR, 'prof');
/** Loads profiled so far by name, so a name measured again (another round) gets a new file. */
const profiled = new Map<string, number>();

/** Sends `message` to our gateway and waits for its answer carrying `key` (gateway.ts). */
function askGateway(message: object, key: string): Promise<void> {
  const child = gatewayChild!;
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`our gateway did not answer ${JSON.stringify(message)} within 60 s`)), 60_000);
    const onMessage = (m: unknown) => {
      if (typeof m !== 'object' || m === null || !(key in m)) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      res();
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

/**
 * Starts the CPU profiler in our gateway when BENCH_CPU_PROF is set and the load is on it, and
 * answers how to finish: stop it, write the profile and where its time went (per request of the
 * load). Started before the load's CPU is first read and finished after it is last read, so the
 * profiler's own start and write are not in the load's figures (its sampling is).
 */
async function startProfile(target: Target, mode: LoadMode, conns: number): Promise<((requests: number) => Promise<void>) | null> {
  if (!PROFILE || target.pid === null || target.pid !== gatewayChild?.pid) return null;
  const name = `${target.name}-${mode}-${conns}`;
  const nth = (profiled.get(name) ?? 0) + 1;
  profiled.set(name, nth);
  mkdirSync(PROF_DIR, { recursive: true });
  const file = join(PROF_DIR, `${STAMP}-${name}${nth > 1 ? `-${nth}` : ''}.cpuprofile`);
  await askGateway({ profile: 'start' }, 'profiling');
  return async (requests) => {
    await askGateway({ profile: 'stop', file }, 'profiled');
    const summary = summarizeCpuProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    const markdown = file.replace(/\.cpuprofile$/, '.md');
    writeFileSync(markdown, profileMarkdown(`${name}: our gateway's CPU profile`, summary, { count: requests, unit: 'request' }));
    console.log(`    profile: ${markdown} (${summary.areas.slice(0, 6).map(({ area, share }) => `${area} ${(share * 100).toFixed(0)}%`).join(', ')})`);
  };
}

async function load(target: Target, mode: LoadMode, conns: number): Promise<LoadRow> {
  const options = loadOptions(target, mode, conns);
  await autocannon({ ...options, duration: WARM });
  let peakKb = 0;
  const sample = () => {
    if (target.pid) peakKb = Math.max(peakKb, statusKb(target.pid, 'VmRSS'));
  };
  const sampler = setInterval(sample, 100);
  // Creations run on our gateway too: its process and its PostgreSQL backends are measured alike.
  const ours = target.name === 'ours' || mode === 'create';
  // Scraped outside the measured window: a scrape's own work (open holds, queue counts) is not the load's.
  const batches0 = ours ? await groupCommitCounts(target.url) : null;
  const finishProfile = await startProfile(target, mode, conns);
  const cpu0 = target.pid ? cpuSplit(target.pid) : { user: 0, sys: 0 };
  const pg0 = ours ? await pgBackendTicks(gatewayDb!) : new Map<number, number>();
  const result: Result = await autocannon({ ...options, duration: DUR });
  const cpu1 = target.pid ? cpuSplit(target.pid) : { user: 0, sys: 0 };
  const pg1 = ours ? await pgBackendTicks(gatewayDb!) : new Map<number, number>();
  const batches1 = ours ? await groupCommitCounts(target.url) : null;
  const ticks0 = cpu0.user + cpu0.sys;
  const ticks1 = cpu1.user + cpu1.sys;
  clearInterval(sampler);
  sample();
  const total = result.requests.total;
  await finishProfile?.(total);
  const row: LoadRow = {
    target: target.name,
    mode,
    conns,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    total,
    failures: result.non2xx + result.errors + result.timeouts,
    cpuUsPerReq: target.pid && total > 0 ? (((ticks1 - ticks0) / CLK_TCK) * 1e6) / total : null,
    sysUsPerReq: target.pid && total > 0 ? (((cpu1.sys - cpu0.sys) / CLK_TCK) * 1e6) / total : null,
    pgCpuUsPerReq: ours && total > 0 && pg1.size > 0 ? ((pgTicksBetween(pg0, pg1) / CLK_TCK) * 1e6) / total : null,
    peakRssMb: target.pid ? peakKb / 1024 : null,
  };
  console.log(
    `  ${mode.padEnd(9)} c=${String(conns).padEnd(3)} ${target.name.padEnd(15)} ${fmt(row.rps).padStart(6)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms` +
      (row.cpuUsPerReq !== null ? `  cpu ${fmt(row.cpuUsPerReq)} µs/req (sys ${fmt(row.sysUsPerReq)})  rss ${fmt(row.peakRssMb)} MB` : '') +
      (row.pgCpuUsPerReq !== null ? `  postgres ${fmt(row.pgCpuUsPerReq)} µs/req` : '') +
      (batches0 && batches1 ? `  per batch: ${batchSizes(batches0, batches1)}` : '') +
      (row.failures ? `  FAILURES ${row.failures}` : ''),
  );
  return row;
}

/** The group commits' gauges (calls and what they carried, since start) from our /metrics. */
async function groupCommitCounts(targetUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(new URL('/metrics', targetUrl))).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^svc_(wallet_group_commit_(?:calls|requests)|task_creation_group_commit)\{(?:operation|count)="(\w+)"\} (\d+)$/gm)) {
    counts.set(`${match[1]}.${match[2]}`, Number(match[3]));
  }
  return counts;
}

/** Requests per database call of each group commit over a load: holds, settlements, creations (and batches redone alone). */
function batchSizes(before: Map<string, number>, after: Map<string, number>): string {
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  const per = (items: string, calls: string) => (delta(calls) > 0 ? fmt(delta(items) / delta(calls), 1) : '–');
  const redone = delta('task_creation_group_commit.redone');
  return (
    `holds ${per('wallet_group_commit_requests.hold', 'wallet_group_commit_calls.hold')}, settlements ${per('wallet_group_commit_requests.resolve', 'wallet_group_commit_calls.resolve')}, ` +
    `creations ${per('task_creation_group_commit.items', 'task_creation_group_commit.calls')}${redone > 0 ? ` (${redone} batches redone alone)` : ''}`
  );
}

// ---------------------------------------------------------------- one-client probe (µs)

interface Timing {
  total: number;
  ttfb: number;
}
function once(target: Target, body: string, agent: http.Agent): Promise<Timing> {
  const url = new URL(target.url);
  return new Promise((res, rej) => {
    const t0 = process.hrtime.bigint();
    let first: bigint | null = null;
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent, headers: { ...target.headers, 'content-length': Buffer.byteLength(body) } },
      (response) => {
        response.on('data', () => {
          first ??= process.hrtime.bigint();
        });
        response.on('end', () => {
          const t1 = process.hrtime.bigint();
          if (response.statusCode !== 200) return rej(new Error(`${target.name}: status ${response.statusCode}`));
          res({ total: Number(t1 - t0) / 1e3, ttfb: Number((first ?? t1) - t0) / 1e3 });
        });
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

interface Probe {
  gateway: Target['name'];
  mode: 'nonstream' | 'stream';
  n: number;
  directP50: number;
  gatewayP50: number;
  gatewayP99: number;
  addedP50: number;
  addedP99: number;
  directTtfbP50: number;
  gatewayTtfbP50: number;
  addedTtfbP50: number;
}

/** Direct and via-gateway requests interleaved (order alternating) so drift hits both alike. */
async function probe(direct: Target, gateway: Target, stream: boolean, n: number): Promise<Probe> {
  const agents = [new http.Agent({ keepAlive: true, maxSockets: 1 }), new http.Agent({ keepAlive: true, maxSockets: 1 })] as const;
  const d: Timing[] = [];
  const g: Timing[] = [];
  const bodies = [direct.body(stream), gateway.body(stream)];
  const warm = Math.max(20, Math.floor(n / 8));
  for (let i = 0; i < warm + n; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const timing = await once(which === 0 ? direct : gateway, bodies[which]!, agents[which]!);
      if (i >= warm) (which === 0 ? d : g).push(timing);
    }
  }
  agents.forEach((a) => a.destroy());
  const totals = (xs: Timing[]) => xs.map((x) => x.total);
  const ttfbs = (xs: Timing[]) => xs.map((x) => x.ttfb);
  const result: Probe = {
    gateway: gateway.name,
    mode: stream ? 'stream' : 'nonstream',
    n,
    directP50: pct(totals(d), 50),
    gatewayP50: pct(totals(g), 50),
    gatewayP99: pct(totals(g), 99),
    addedP50: pct(totals(g), 50) - pct(totals(d), 50),
    addedP99: pct(totals(g), 99) - pct(totals(d), 99),
    directTtfbP50: pct(ttfbs(d), 50),
    gatewayTtfbP50: pct(ttfbs(g), 50),
    addedTtfbP50: pct(ttfbs(g), 50) - pct(ttfbs(d), 50),
  };
  console.log(
    `  probe ${result.mode.padEnd(9)} ${gateway.name.padEnd(8)} n=${n}: total p50 ${fmt(result.gatewayP50)} µs (direct ${fmt(result.directP50)}) → added p50 ${fmt(result.addedP50)} µs, ` +
      `p99 ${fmt(result.addedP99)} µs; TTFB p50 ${fmt(result.gatewayTtfbP50)} µs (direct ${fmt(result.directTtfbP50)}) → added ${fmt(result.addedTtfbP50)} µs`,
  );
  return result;
}

// ---------------------------------------------------------------- creations

/** The creation loads' targets on our gateway (a test-mode key), each checked once with one request. */
async function prepareCreations(info: GatewayInfo, pid: number): Promise<Record<'video' | 'audio', Target>> {
  const testKey = { 'content-type': 'application/json', authorization: `Bearer ${info.testKey}` };
  const voices = (await (await fetch(`${info.url}/v1/audio/voice-library?page=0`, { headers: testKey })).json()) as { voices?: Array<{ id: string; models: string[] }> };
  const voiceId = voices.voices?.find((v) => v.models.includes('voice_v4'))?.id;
  const targets: Record<'video' | 'audio', Target> = {
    video: {
      name: 'video-creations',
      url: `${info.url}/v1/contents/generations/tasks`,
      headers: testKey,
      body: () => JSON.stringify({ model: 'vendor-omni-1.1-flash-preview', prompt: 'benchmark clip', controls: { duration: 3, resolution: '720p' } }),
      pid,
    },
    audio: {
      name: 'audio-creations',
      url: `${info.url}/v1/audio/generations`,
      headers: testKey,
      body: () => JSON.stringify({ model: 'voice_v4', mode: 'text_to_speech', prompt: 'The quick brown fox jumps over the lazy dog.', controls: { voiceId, outputFormat: 'mp3_44100_128' } }),
      pid,
      idempotent: true,
      keys: info.audioKeys,
    },
  };
  for (const kind of CREATIONS) {
    const target = targets[kind];
    const check = await fetch(target.url, { method: 'POST', headers: { ...target.headers, 'idempotency-key': randomUUID() }, body: target.body(false) });
    if (check.status !== 200) throw new Error(`${kind} creation smoke request failed: ${check.status} ${(await check.text()).slice(0, 400)}`);
  }
  return targets;
}

// ---------------------------------------------------------------- checks

async function smoke(target: Target, stream: boolean): Promise<void> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body(stream) });
  const text = await response.text();
  const ok = response.status === 200 && (stream ? text.includes('data: [DONE]') && text.includes('tok18 ') : text.includes('"chat.completion"'));
  if (!ok) throw new Error(`${target.name} ${stream ? 'stream' : 'sync'} smoke request failed: ${response.status} ${text.slice(0, 400)}`);
}

// ---------------------------------------------------------------- report

const fmt = (x: number | null | undefined, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits));
const mark = (ok: boolean | null) => (ok === null ? 'n/a' : ok ? 'MET' : 'NOT MET');

/** One round's measurements. */
interface Round {
  rows: LoadRow[];
  probes: Probe[];
}

function report(rounds: Round[], environment: Record<string, string>): string {
  let out = `### Gateway benchmark (text and creations), ${environment.date}\n\n`;
  out += Object.entries(environment)
    .map(([k, v]) => `- ${k}: ${v}`)
    .join('\n');
  rounds.forEach((round, i) => {
    if (rounds.length > 1) out += `\n\n#### Round ${i + 1} of ${rounds.length}`;
    out += roundTables(round);
  });
  if (rounds.length === 1) out += `\nTargets (issue 17):\n\n${targetTable(rounds)}`;
  else out += `\nTargets (issue 17), judged on the median of the ${rounds.length} rounds (ours, compared with and ratio are medians; each round's ratio after them):\n\n${targetTable(rounds)}`;
  return out;
}

/** The load, one-client and creation tables of one round. */
function roundTables({ rows, probes }: Round): string {
  const row = (t: Target['name'], mode: string, c: number) => rows.find((r) => r.target === t && r.mode === mode && r.conns === c);
  let out = `\n\nLoad (autocannon ${DUR} s after ${WARM} s warm-up; latency in ms, whole-ms resolution; CPU = the gateway process's user+sys per request; RSS = peak VmRSS sampled every 100 ms during the load):\n\n`;
  out += '| mode | clients | ours req/s | ours p50 / p99 | ours CPU µs/req (sys) | PostgreSQL CPU µs/req | ours RSS MB | Portkey req/s | Portkey p50 / p99 | Portkey CPU µs/req (sys) | Portkey RSS MB | ratio ours/Portkey | direct upstream req/s (Gemini fake / OpenAI fake) | failures (ours/Portkey) |\n';
  out += '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n';
  for (const mode of MODES) {
    for (const c of CONNS) {
      const o = row('ours', mode, c);
      const p = row('portkey', mode, c);
      const gd = row('gemini-direct', mode, c);
      const od = row('openai-direct', mode, c);
      out +=
        `| ${mode} | ${c} | ${fmt(o?.rps)} | ${o ? `${o.p50} / ${o.p99}` : '–'} | ${fmt(o?.cpuUsPerReq)} (${fmt(o?.sysUsPerReq)}) | ${fmt(o?.pgCpuUsPerReq)} | ${fmt(o?.peakRssMb)} | ` +
        `${fmt(p?.rps)} | ${p ? `${p.p50} / ${p.p99}` : '–'} | ${fmt(p?.cpuUsPerReq)} (${fmt(p?.sysUsPerReq)}) | ${fmt(p?.peakRssMb)} | ` +
        `${o && p ? `${fmt(o.rps / p.rps, 2)}×` : '–'} | ${gd || od ? `${fmt(gd?.rps)} / ${fmt(od?.rps)}` : '–'} | ${fmt(o?.failures)} / ${fmt(p?.failures)} |\n`;
    }
  }
  out += '\nOne client, µs (interleaved with direct upstream requests; p50 unless marked):\n\n';
  out += '| gateway | mode | n | direct total | via gateway total (p99) | added total p50 / p99 | direct TTFB | via gateway TTFB | added TTFB |\n|---|---|---|---|---|---|---|---|---|\n';
  for (const p of probes) {
    out += `| ${p.gateway} | ${p.mode} | ${p.n} | ${fmt(p.directP50)} | ${fmt(p.gatewayP50)} (${fmt(p.gatewayP99)}) | ${fmt(p.addedP50)} / ${fmt(p.addedP99)} | ${fmt(p.directTtfbP50)} | ${fmt(p.gatewayTtfbP50)} | ${fmt(p.addedTtfbP50)} |\n`;
  }

  // Creations beside text
  const creations = rows.filter((r) => r.mode === 'create');
  if (creations.length) {
    out += '\nTask creations on the same gateway (test-mode key, sandbox, no worker):\n\n';
    out += '| creation | clients | req/s | p50 / p99 ms | gateway CPU µs/req (sys) | PostgreSQL CPU µs/req | failures |\n|---|---|---|---|---|---|---|\n';
    for (const c of creations) {
      out += `| ${c.target} | ${c.conns} | ${fmt(c.rps)} | ${c.p50} / ${c.p99} | ${fmt(c.cpuUsPerReq)} (${fmt(c.sysUsPerReq)}) | ${fmt(c.pgCpuUsPerReq)} | ${fmt(c.failures)} |\n`;
    }
  }
  return out;
}

/** One target figure of one round: ours, what it is compared with, and whether it is met. */
interface Figure {
  figure: string;
  ours: number | null;
  theirs: number | null;
  ratio: number | null;
  target: string;
  /** How ours and theirs are written (their unit). */
  show: (x: number | null) => string;
  /** After "compared with" (what the comparison is). */
  theirsNote?: string;
  met: (ratio: number | null, ours: number | null) => boolean | null;
}

/** Issue 17's figures measured in one round: each a ratio to Portkey or to the same round's sync text. */
function targetFigures({ rows, probes }: Round): Figure[] {
  const row = (t: Target['name'], mode: LoadMode, c: number) => rows.find((r) => r.target === t && r.mode === mode && r.conns === c);
  const probeOf = (g: string, mode: string) => probes.find((p) => p.gateway === g && p.mode === mode);
  const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? a / b : null);
  const atMost = (limit: number) => (r: number | null) => (r === null ? null : r <= limit);
  const atLeast = (limit: number) => (r: number | null) => (r === null ? null : r >= limit);
  const plain = (x: number | null) => fmt(x);
  const ms = (us: number | null) => (us === null ? '–' : `${fmt(us / 1000, 2)} ms`);
  const figures: Figure[] = [];
  const add = (figure: Omit<Figure, 'ratio'>) => figures.push({ ...figure, ratio: ratio(figure.ours, figure.theirs) });

  for (const mode of ['nonstream', 'stream'] as const) {
    for (const c of CONNS) {
      const o = row('ours', mode, c);
      if (!o) continue;
      add({
        figure: `text ${mode === 'stream' ? 'stream' : 'sync'} req/s at ${c} clients`,
        ours: o.rps,
        theirs: row('portkey', mode, c)?.rps ?? null,
        target: `≥ ${TARGETS.rpsRatio}× Portkey`,
        show: plain,
        met: atLeast(TARGETS.rpsRatio),
      });
    }
  }
  const pkSync = probeOf('portkey', 'nonstream')?.addedP50 ?? null;
  add({
    figure: 'added p50 at one client, sync',
    ours: probeOf('ours', 'nonstream')?.addedP50 ?? null,
    theirs: pkSync,
    target: `≤ ${TARGETS.addedRatio}× Portkey's added p50`,
    show: ms,
    met: atMost(TARGETS.addedRatio),
  });
  add({
    figure: 'added TTFB at one client, stream',
    ours: probeOf('ours', 'stream')?.addedTtfbP50 ?? null,
    theirs: pkSync,
    theirsNote: ' (sync added p50)',
    target: `≤ ${TARGETS.addedRatio}× Portkey's sync added p50`,
    show: ms,
    met: atMost(TARGETS.addedRatio),
  });
  for (const mode of ['nonstream', 'stream'] as const) {
    for (const c of CONNS) {
      const o = row('ours', mode, c);
      if (!o) continue;
      const limit = TARGETS.cpuRatio[mode];
      add({
        figure: `gateway CPU µs/req, ${mode === 'stream' ? 'stream' : 'sync'} at ${c} clients`,
        ours: o.cpuUsPerReq,
        theirs: row('portkey', mode, c)?.cpuUsPerReq ?? null,
        target: `≤ ${limit}× Portkey`,
        show: plain,
        met: atMost(limit),
      });
    }
  }
  const biggest = Math.max(...CONNS);
  add({
    figure: `gateway RSS at ${biggest} streaming clients`,
    ours: row('ours', 'stream', biggest)?.peakRssMb ?? null,
    theirs: row('portkey', 'stream', biggest)?.peakRssMb ?? null,
    target: `≤ ${TARGETS.rssRatio}× Portkey and ≤ ${TARGETS.rssMb} MB`,
    show: (x) => `${fmt(x)} MB`,
    met: (r, ours) => (ours === null ? null : ours <= TARGETS.rssMb && (r === null || r <= TARGETS.rssRatio)),
  });
  const first = CONNS[0]!;
  for (const kind of CREATIONS) {
    add({
      figure: `${kind} creations/s at ${first} clients${kind === 'audio' ? ' (Idempotency-Key on each)' : ''}`,
      ours: row(`${kind}-creations`, 'create', first)?.rps ?? null,
      theirs: row('ours', 'nonstream', first)?.rps ?? null,
      theirsNote: ' (our sync text req/s)',
      target: `≥ ${TARGETS.creationRatio}× sync text`,
      show: plain,
      met: atLeast(TARGETS.creationRatio),
    });
  }
  return figures;
}

/** The median of the numbers among `xs` (null when there are none). */
function median(xs: Array<number | null>): number | null {
  const known = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (known.length === 0) return null;
  const mid = Math.floor(known.length / 2);
  return known.length % 2 === 1 ? known[mid]! : (known[mid - 1]! + known[mid]!) / 2;
}

/**
 * Issue 17's target table, MET / NOT MET: one line per figure. With one round, that round's
 * figures; with several, the medians of ours, of what it is compared with and of the rounds'
 * ratios (the verdict is on the median ratio), then each round's ratio.
 */
function targetTable(rounds: Round[]): string {
  const perRound = rounds.map(targetFigures);
  const several = rounds.length > 1;
  const lines = perRound[0]!.map((figure, i) => {
    const same = perRound.map((figures) => figures[i]!);
    const ours = median(same.map((f) => f.ours));
    const theirs = median(same.map((f) => f.theirs));
    const ratio = median(same.map((f) => f.ratio));
    const shown = (r: number | null) => (r === null ? '–' : `${fmt(r, 2)}×`);
    const cells = [figure.figure, figure.show(ours), `${figure.show(theirs)}${figure.theirsNote ?? ''}`, shown(ratio)];
    if (several) cells.push(same.map((f) => shown(f.ratio)).join(' / '));
    cells.push(figure.target, mark(figure.met(ratio, ours)));
    return `| ${cells.join(' | ')} |`;
  });
  const head = several ? '| figure | ours | compared with | ratio | each round | target | |\n|---|---|---|---|---|---|---|' : '| figure | ours | compared with | ratio | target | |\n|---|---|---|---|---|---|';
  return `${head}\n${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------- one round

/** What a round measures: our gateway, Portkey (unless skipped), the upstreams alone, the creation targets. */
interface RoundTargets {
  ours: Target;
  portkey: Target | null;
  geminiDirect: Target;
  geminiDirectStream: Target;
  openaiDirect: Target;
  creations: Record<'video' | 'audio', Target> | null;
}

/** One round: the text loads, the creations, the one-client probes (the upstreams alone in the first round only). */
async function measureRound(round: number, targets: RoundTargets): Promise<Round> {
  const { ours: oursT, portkey: portkeyT, geminiDirect, geminiDirectStream, openaiDirect, creations: creationTargets } = targets;
  const rows: LoadRow[] = [];
  const probes: Probe[] = [];
  console.log('\nload:');
  for (const mode of MODES) {
    const direct = mode === 'stream' ? geminiDirectStream : geminiDirect;
    for (const [i, c] of CONNS.entries()) {
      // Gateways back to back (order alternating between rounds); the upstreams alone once, for context.
      const gateways = portkeyT ? ((i + round) % 2 === 0 ? [oursT, portkeyT] : [portkeyT, oursT]) : [oursT];
      for (const t of gateways) rows.push(await load(t, mode, c));
      if (i === 0 && round === 0) {
        rows.push(await load(direct, mode, c));
        if (portkeyT) rows.push(await load(openaiDirect, mode, c));
      }
    }
  }
  if (creationTargets) {
    console.log('\ncreations:');
    for (const kind of CREATIONS) {
      const target = creationTargets[kind];
      if (CREATION_PREWARM > 0 && round === 0) {
        // As for text: the domain's new tables analyzed, as autovacuum does within its first minute.
        await autocannon({ ...loadOptions(target, 'create', CONNS[0]!), duration: CREATION_PREWARM });
        await analyzeDatabase(gatewayDb!);
      }
      rows.push(await load(target, 'create', CONNS[0]!));
    }
  }
  console.log('\none client:');
  probes.push(await probe(geminiDirect, oursT, false, PROBE_N));
  if (portkeyT) probes.push(await probe(openaiDirect, portkeyT, false, PROBE_N));
  probes.push(await probe(geminiDirectStream, oursT, true, PROBE_STREAM_N));
  if (portkeyT) probes.push(await probe(openaiDirect, portkeyT, true, PROBE_STREAM_N));
  return { rows, probes };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`benchmark exceeded ${TIMEOUT_S} s: stopping everything`);
    void stopAll().finally(() => process.exit(1));
  }, TIMEOUT_S * 1000);
  watchdog.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  }
  mkdirSync(OUT_DIR, { recursive: true });

  const environment: Record<string, string> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    'load average at start': readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    'our gateway': `LOG_LEVEL=${LOG_LEVEL}, APP_ROLE=api, NODE_ENV=production, live Gemini adapter, model ${MODEL}, ${ACCOUNTS} workspace(s)/wallet(s)`,
  };
  console.log(Object.entries(environment).map(([k, v]) => `${k}: ${v}`).join('\n'));

  const portkeyDir = preparePortkey();
  const [pGemini, pOpenai, pPortkey] = await Promise.all([freePort(), freePort(), freePort()]);
  const gemini = startNode('fake-gemini', [join(HERE, 'fake-gemini.js')], { env: { PORT: String(pGemini) } });
  const geminiUrl = `http://127.0.0.1:${pGemini}`;
  const openaiUrl = `http://127.0.0.1:${pOpenai}`;
  const portkeyUrl = `http://127.0.0.1:${pPortkey}`;
  let portkey: Proc | null = null;
  if (portkeyDir) {
    environment.portkey = JSON.parse(readFileSync(join(portkeyDir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')).version;
    startNode('fake-openai', [join(portkeyDir, 'fake-upstream.mjs')], { cwd: portkeyDir, env: { PORT: String(pOpenai), HOST: '127.0.0.1' } });
    portkey = startNode('portkey', ['-r', './bind-loopback.cjs', 'node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${pPortkey}`, '--headless'], {
      cwd: portkeyDir,
      env: { NODE_ENV: 'production' },
    });
  }
  await waitHttp(`${geminiUrl}/health`, 'fake Gemini');
  const { proc: ours, info } = await startGateway(geminiUrl);
  if (portkeyDir) {
    await waitHttp(`${openaiUrl}/health`, 'fake OpenAI upstream');
    await waitHttp(`${portkeyUrl}/`, 'Portkey');
  }
  void gemini;

  const json = { 'content-type': 'application/json' };
  const chatBody = (model: string) => (stream: boolean) =>
    JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 16 });
  const oursT: Target = {
    name: 'ours',
    url: `${info.url}/api/svc/v1/chat/completions`,
    headers: { ...json, authorization: `Bearer ${info.key}` },
    body: chatBody(MODEL),
    pid: ours.child.pid!,
    keys: info.keys,
  };
  const geminiDirect: Target = {
    name: 'gemini-direct',
    url: `${geminiUrl}/v1beta/models/${MODEL}:generateContent`,
    headers: { ...json, 'x-goog-api-key': 'fake-gemini-key' },
    body: () => JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hi' }] }], generationConfig: { maxOutputTokens: 16 } }),
    pid: null,
  };
  const geminiDirectStream: Target = { ...geminiDirect, url: `${geminiUrl}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse` };
  const portkeyT: Target = {
    name: 'portkey',
    url: `${portkeyUrl}/v1/chat/completions`,
    headers: { ...json, authorization: 'Bearer sk-fake', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${openaiUrl}/v1` },
    body: chatBody('gpt-4o-mini'),
    pid: portkey?.child.pid ?? null,
  };
  const openaiDirect: Target = { name: 'openai-direct', url: `${openaiUrl}/v1/chat/completions`, headers: json, body: chatBody('gpt-4o-mini'), pid: null };

  await smoke(oursT, false);
  await smoke(oursT, true);
  if (portkey) {
    await smoke(portkeyT, false);
    await smoke(portkeyT, true);
  }

  // One unmeasured load on each gateway first: on a database created seconds before, PostgreSQL
  // plans the wallet's statements for an empty `hold` table (sequential scans, PostgreSQL CPU per
  // request 3–5× the steady figure) until autovacuum first analyzes it, which is not the
  // gateway's steady state (docs/benchmarks.md › Issue 17 figures).
  if (PREWARM > 0) {
    console.log(`\nprewarm: ${PREWARM} s of sync load at ${Math.max(...CONNS)} clients on each gateway (not measured)`);
    for (const t of portkey ? [oursT, portkeyT] : [oursT]) await autocannon({ url: t.url, method: 'POST', headers: t.headers, body: t.body(false), connections: Math.max(...CONNS), duration: PREWARM });
    // What autovacuum does within a new database's first minute: statistics for the tables the
    // prewarm filled, so the wallet's cached plans are made again for their real size.
    await analyzeDatabase(gatewayDb!);
  }

  const creationTargets = CREATIONS.length ? await prepareCreations(info, ours.child.pid!) : null;

  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`\nround ${round + 1} of ${ROUNDS}`);
    rounds.push(await measureRound(round, { ours: oursT, portkey: portkey ? portkeyT : null, geminiDirect, geminiDirectStream, openaiDirect, creations: creationTargets }));
  }

  environment['our gateway peak RSS over the whole run (VmHWM)'] = `${fmt(statusKb(oursT.pid!, 'VmHWM') / 1024)} MB`;
  if (portkey) environment['Portkey peak RSS over the whole run (VmHWM)'] = `${fmt(statusKb(portkeyT.pid!, 'VmHWM') / 1024)} MB`;
  environment['load average at end'] = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

  const summary = report(rounds, environment);
  console.log(`\n${summary}`);
  // One round: its rows and probes at the top level, as before rounds existed.
  const results = rounds.length === 1 ? { environment, ...rounds[0]! } : { environment, rounds };
  writeFileSync(join(OUT_DIR, `${STAMP}.json`), JSON.stringify(results, null, 2));
  writeFileSync(join(OUT_DIR, `${STAMP}.md`), summary);
  console.log(`results: ${join(OUT_DIR, STAMP)}.{json,md}`);
}

let code = 0;
try {
  await main();
} catch (error) {
  console.error('benchmark failed:', error);
  code = 1;
} finally {
  await stopAll();
}
process.exit(code);
