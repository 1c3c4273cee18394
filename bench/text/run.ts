// Text benchmark (issue 4, docs/benchmarks.md › Text): our POST /api/svc/v1/chat/completions
// (sync and stream, auth + wallet hold + settle on, LIVE Gemini adapter) against an instant fake
// Gemini upstream, and — in the same run, side by side — Portkey's gateway against the anchor's
// instant fake OpenAI upstream (../shared/bench/portkey-anchor). Every process runs on loopback:
//   fake Gemini ─ our gateway (forked, own DB)      fake OpenAI ─ Portkey (node -r bind-loopback)
// and this process drives the load (autocannon, as the anchor does) and the one-client probes.
//
//   npm run bench:text       (builds into .build/textbench, then runs this file)
//
// Needs local PostgreSQL and Redis as the tests do (TEST_DATABASE_SERVER_URL, TEST_REDIS_URL).
// Portkey is installed once into .build/portkey-anchor (a copy of the anchor folder, never inside
// shared/). Knobs: DUR (8 s per load), WARM (2 s), CONNS ("32 64"), MODES ("nonstream stream"),
// PROBE_N (1000), PROBE_STREAM_N (200), BENCH_LOG_LEVEL (warn), BENCH_MODEL (vendor-3.7-flash),
// BENCH_ACCOUNTS (1 = every request on one wallet row; N rotates requests over N workspaces),
// PORTKEY_ANCHOR_DIR, PORTKEY_DIR, SKIP_PORTKEY=1, BENCH_CPU_PROF=1 (profile our gateway into
// bench/results/text/prof), BENCH_TIMEOUT_S (900). Results: bench/results/text/<time>.{json,md}.
import autocannon, { type Result } from 'autocannon';
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = process.cwd();
const DUR = Number(process.env.DUR ?? 8);
const WARM = Number(process.env.WARM ?? 2);
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

const TARGETS = { rpsRatio: 3, addedP50Ms: 1, addedTtfbMs: 2, rssMb: 250 };

// ---------------------------------------------------------------- processes

interface Proc {
  name: string;
  child: ChildProcess;
}
const procs: Proc[] = [];
let gatewayDb: string | null = null;

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
  database: string;
}

async function startGateway(geminiUrl: string): Promise<{ proc: Proc; info: GatewayInfo }> {
  const fd = logFile('gateway');
  // Node flags of our gateway process; the default is what `npm start` runs with (package.json).
  const execArgv: string[] = (process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  if (process.env.BENCH_CPU_PROF) {
    mkdirSync(join(OUT_DIR, 'prof'), { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${join(OUT_DIR, 'prof')}`);
  }
  const child = fork(join(HERE, 'gateway.js'), [], {
    cwd: ROOT,
    execArgv,
    env: { ...process.env, BENCH_GEMINI_URL: geminiUrl, BENCH_LOG_LEVEL: LOG_LEVEL, BENCH_ACCOUNTS: String(ACCOUNTS) },
    stdio: ['ignore', fd, fd, 'ipc'],
  });
  const proc = { name: 'gateway', child };
  procs.push(proc);
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
/** CPU ticks of the PostgreSQL backends serving our gateway's database (the wallet's and the keys' cost). */
let pgPids: number[] = [];
async function refreshPgPids(database: string): Promise<void> {
  const server = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  try {
    await client.connect();
    const rows = (await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database])).rows;
    pgPids = rows.map((r) => r.pid);
  } catch {
    pgPids = [];
  } finally {
    await client.end().catch(() => undefined);
  }
}
const pgTicks = () => pgPids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
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
  name: 'ours' | 'portkey' | 'gemini-direct' | 'openai-direct';
  url: string;
  headers: Record<string, string>;
  body: (stream: boolean) => string;
  pid: number | null; // the gateway process measured (null for an upstream hit directly)
  /** Several API keys (BENCH_ACCOUNTS > 1): requests rotate over them, one workspace per key. */
  keys?: string[];
}

interface LoadRow {
  target: Target['name'];
  mode: 'nonstream' | 'stream';
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

async function load(target: Target, mode: 'nonstream' | 'stream', conns: number): Promise<LoadRow> {
  const options: Parameters<typeof autocannon>[0] = { url: target.url, method: 'POST', headers: target.headers, body: target.body(mode === 'stream'), connections: conns, timeout: 30 };
  const keys = target.keys ?? [];
  if (keys.length > 1) {
    let next = 0;
    options.requests = [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${keys[next++ % keys.length]}` } }) }];
  }
  await autocannon({ ...options, duration: WARM });
  let peakKb = 0;
  const sample = () => {
    if (target.pid) peakKb = Math.max(peakKb, statusKb(target.pid, 'VmRSS'));
  };
  const sampler = setInterval(sample, 100);
  const ours = target.name === 'ours';
  if (ours) await refreshPgPids(gatewayDb!);
  const cpu0 = target.pid ? cpuSplit(target.pid) : { user: 0, sys: 0 };
  const pg0 = ours ? pgTicks() : 0;
  const result: Result = await autocannon({ ...options, duration: DUR });
  const cpu1 = target.pid ? cpuSplit(target.pid) : { user: 0, sys: 0 };
  const pg1 = ours ? pgTicks() : 0;
  const ticks0 = cpu0.user + cpu0.sys;
  const ticks1 = cpu1.user + cpu1.sys;
  clearInterval(sampler);
  sample();
  const total = result.requests.total;
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
    pgCpuUsPerReq: ours && total > 0 && pgPids.length > 0 ? (((pg1 - pg0) / CLK_TCK) * 1e6) / total : null,
    peakRssMb: target.pid ? peakKb / 1024 : null,
  };
  console.log(
    `  ${mode.padEnd(9)} c=${String(conns).padEnd(3)} ${target.name.padEnd(13)} ${fmt(row.rps).padStart(6)} req/s  p50 ${row.p50} ms  p99 ${row.p99} ms` +
      (row.cpuUsPerReq !== null ? `  cpu ${fmt(row.cpuUsPerReq)} µs/req (sys ${fmt(row.sysUsPerReq)})  rss ${fmt(row.peakRssMb)} MB` : '') +
      (row.pgCpuUsPerReq !== null ? `  postgres ${fmt(row.pgCpuUsPerReq)} µs/req` : '') +
      (row.failures ? `  FAILURES ${row.failures}` : ''),
  );
  return row;
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

function report(rows: LoadRow[], probes: Probe[], environment: Record<string, string>): string {
  const row = (t: Target['name'], mode: string, c: number) => rows.find((r) => r.target === t && r.mode === mode && r.conns === c);
  const probeOf = (g: string, mode: string) => probes.find((p) => p.gateway === g && p.mode === mode);
  let out = `### Text benchmark, ${environment.date}\n\n`;
  out += Object.entries(environment)
    .map(([k, v]) => `- ${k}: ${v}`)
    .join('\n');
  out += `\n\nLoad (autocannon ${DUR} s after ${WARM} s warm-up; latency in ms, whole-ms resolution; CPU = the gateway process's user+sys per request; RSS = peak VmRSS sampled every 100 ms during the load):\n\n`;
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

  // Targets
  const ratios = rows
    .filter((r) => r.target === 'ours')
    .map((o) => ({ o, p: row('portkey', o.mode, o.conns) }))
    .filter((x) => x.p)
    .map(({ o, p }) => ({ label: `${o.mode} c${o.conns}`, ratio: o.rps / p!.rps }));
  const ns = probeOf('ours', 'nonstream');
  const st = probeOf('ours', 'stream');
  const ourRss = Math.max(...rows.filter((r) => r.target === 'ours').map((r) => r.peakRssMb ?? 0));
  const portkeyRss = Math.max(0, ...rows.filter((r) => r.target === 'portkey').map((r) => r.peakRssMb ?? 0));
  const pkNs = probeOf('portkey', 'nonstream');
  const pkSt = probeOf('portkey', 'stream');
  out += '\nTargets:\n\n';
  out += `- ≥ ${TARGETS.rpsRatio}× Portkey's req/s with auth and holds on: ${
    ratios.length ? ratios.map((r) => `${r.label} ${fmt(r.ratio, 2)}× ${mark(r.ratio >= TARGETS.rpsRatio)}`).join('; ') : 'n/a (Portkey not measured)'
  }\n`;
  out += `- ≤ ${TARGETS.addedP50Ms} ms added p50 at one client: ${ns ? `${fmt(ns.addedP50 / 1000, 3)} ms ${mark(ns.addedP50 <= TARGETS.addedP50Ms * 1000)}` : 'n/a'}${pkNs ? ` (Portkey ${fmt(pkNs.addedP50 / 1000, 3)} ms)` : ''}\n`;
  out += `- ≤ ${TARGETS.addedTtfbMs} ms added TTFB (stream): ${st ? `${fmt(st.addedTtfbP50 / 1000, 3)} ms ${mark(st.addedTtfbP50 <= TARGETS.addedTtfbMs * 1000)}` : 'n/a'}${pkSt ? ` (Portkey ${fmt(pkSt.addedTtfbP50 / 1000, 3)} ms)` : ''}\n`;
  out += `- ≤ ${TARGETS.rssMb} MB resident under load: ${fmt(ourRss)} MB ${mark(ourRss <= TARGETS.rssMb)}${portkeyRss ? ` (Portkey ${fmt(portkeyRss)} MB)` : ''}\n`;
  return out;
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

  const rows: LoadRow[] = [];
  const probes: Probe[] = [];
  console.log('\nload:');
  for (const mode of MODES) {
    const direct = mode === 'stream' ? geminiDirectStream : geminiDirect;
    for (const [i, c] of CONNS.entries()) {
      // Gateways back to back (order alternating between rounds); the upstreams alone once, for context.
      const gateways = portkey ? (i % 2 === 0 ? [oursT, portkeyT] : [portkeyT, oursT]) : [oursT];
      for (const t of gateways) rows.push(await load(t, mode, c));
      if (i === 0) {
        rows.push(await load(direct, mode, c));
        if (portkey) rows.push(await load(openaiDirect, mode, c));
      }
    }
  }
  console.log('\none client:');
  probes.push(await probe(geminiDirect, oursT, false, PROBE_N));
  if (portkey) probes.push(await probe(openaiDirect, portkeyT, false, PROBE_N));
  probes.push(await probe(geminiDirectStream, oursT, true, PROBE_STREAM_N));
  if (portkey) probes.push(await probe(openaiDirect, portkeyT, true, PROBE_STREAM_N));

  environment['our gateway peak RSS over the whole run (VmHWM)'] = `${fmt(statusKb(oursT.pid!, 'VmHWM') / 1024)} MB`;
  if (portkey) environment['Portkey peak RSS over the whole run (VmHWM)'] = `${fmt(statusKb(portkeyT.pid!, 'VmHWM') / 1024)} MB`;
  environment['load average at end'] = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

  const summary = report(rows, probes, environment);
  console.log(`\n${summary}`);
  writeFileSync(join(OUT_DIR, `${STAMP}.json`), JSON.stringify({ environment, rows, probes }, null, 2));
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
