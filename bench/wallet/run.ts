// The wallet's two round trips of every paid request, one at a time (issue 17: the one-client
// floor; docs/benchmarks.md › Issue 17 figures, the one-client floor). A text request waits for a
// hold before its upstream call and for a durable settlement before its answer; with one client
// nothing is batched, so these two round trips are the part of the added latency that is the
// database's. Each figure is p50 / p90 in µs of N calls made one after another, back to back
// (PostgreSQL's backend and this process stay hot) and with GAP_MS of idle time before each call,
// as between one client's requests (both processes go to sleep and wake up cold):
//   - `SELECT 1` on the same kind of connection (the loopback round trip);
//   - the hold statement alone (asynchronous commit), and WalletService.hold (group commit, journal);
//   - the resolution statement alone (durable commit), the same with the commit not waiting for
//     the WAL flush (what the flush costs), and WalletService.settle.
// Then the batched calls the group commit makes under load (svc_hold_many, svc_resolve_many) by
// batch size: the PostgreSQL backend's CPU per call (its /proc/<pid>/schedstat, so PostgreSQL
// must run on this machine) and per item, and the wall time per call: what a call costs one at a
// time (docs/benchmarks.md › Wallet round trips says how little of its fixed part carried over to
// a loaded database).
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:wallet (builds into dist/
// first). Knobs: N (2000), GAP_MS (1), BATCH_CALLS (400 calls per batch size), BATCH_SIZES
// ("1 2 4 8 16 32").
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { HoldInput } from '../../src/modules/billing/wallet.repository.js';
import { HOLD, HOLD_MANY, RESOLVE, RESOLVE_MANY } from '../../src/modules/billing/wallet.repository.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp } from '../../test/support/test-app.js';
import { describeMachine, percentile, runBench } from '../support/drive.js';

const N = Number(process.env.N ?? 2000);
const GAP_MS = Number(process.env.GAP_MS ?? 1);
const WARM_UP = 300;
const BATCH_CALLS = Number(process.env.BATCH_CALLS ?? 400);
const BATCH_SIZES = (process.env.BATCH_SIZES ?? '1 2 4 8 16 32').split(/\s+/).filter(Boolean).map(Number);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** p50 / p90 in µs of `N` calls of `call(i)`, after WARM_UP unmeasured ones, each after `gapMs` idle. */
async function timed(call: (i: number) => Promise<unknown>, gapMs: number): Promise<string> {
  for (let i = 0; i < WARM_UP; i++) await call(i);
  const micros: number[] = [];
  for (let i = 0; i < N; i++) {
    if (gapMs > 0) await sleep(gapMs);
    const started = process.hrtime.bigint();
    await call(WARM_UP + i);
    micros.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return `${percentile(micros, 50).toFixed(0)} / ${percentile(micros, 90).toFixed(0)}`;
}

runBench(async () => {
  const t = await bootTestApp({ label: 'benchwallet', env: { LOG_LEVEL: 'warn', APP_ROLE: 'api' } });
  const client = new pg.Client({ connectionString: t.db.url });
  try {
    const account = await createAccount(t, { creditUsd: 1_000_000 });
    const wallet = t.app.get(WalletService);
    await client.connect();
    const input: HoldInput = { workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: 1000n, subjectType: 'text', subjectId: 'bench' };
    const holdValues = (id: string) => [input.workspaceId, input.environment, input.amountMicros.toString(), id, input.apiKeyId, input.subjectType, randomUUID()];
    /** Open holds for the resolutions to take, made beforehand by the hold statement. */
    const openHolds = async (count: number): Promise<string[]> => {
      const ids = Array.from({ length: count }, () => randomUUID());
      for (const id of ids) await client.query({ ...HOLD, values: holdValues(id) });
      return ids;
    };

    const rows: Array<[string, (i: number) => Promise<unknown>]> = [];
    rows.push(['SELECT 1', () => client.query('SELECT 1')]);
    rows.push(['hold statement (asynchronous commit)', () => client.query({ ...HOLD, values: holdValues(randomUUID()) })]);
    rows.push(['WalletService.hold', () => wallet.hold({ ...input, subjectId: randomUUID() })]);
    const resolutions = (label: string, resolve: (holdId: string) => Promise<unknown>, before?: string, after?: string): void => {
      let holds: string[] = [];
      rows.push([
        label,
        async (i) => {
          if (i === 0) {
            holds = await openHolds(WARM_UP + N);
            if (before) await client.query(before);
          }
          await resolve(holds[i]!);
          if (i === WARM_UP + N - 1 && after) await client.query(after);
        },
      ]);
    };
    resolutions('resolution statement (durable commit)', (id) => client.query({ ...RESOLVE, values: [id, '500', 'settled'] }));
    resolutions(
      'resolution statement, commit without the WAL flush',
      (id) => client.query({ ...RESOLVE, values: [id, '500', 'settled'] }),
      'SET synchronous_commit = off',
      'RESET synchronous_commit',
    );
    resolutions('WalletService.settle', (id) => wallet.settle(id, 500n, 'charge', input));

    const results: string[] = [];
    for (const [label, call] of rows) {
      // Each run of a resolution row needs its own open holds: `i === 0` makes them.
      const backToBack = await timed(call, 0);
      const gapped = await timed(call, GAP_MS);
      results.push(`| ${label} | ${backToBack} | ${gapped} |`);
    }
    console.log(`### Wallet round trips, one at a time (${describeMachine()}, ${new Date().toISOString()})\n`);
    console.log(`N = ${N} per figure after ${WARM_UP} unmeasured; p50 / p90 in µs.\n`);
    console.log(`| call | back to back | after ${GAP_MS} ms idle |`);
    console.log('|---|---|---|');
    for (const line of results) console.log(line);

    // The batched calls, by batch size: the backend's CPU is read around each call.
    const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const backendCpuNs = (): number => Number(readFileSync(`/proc/${backend}/schedstat`, 'utf8').split(' ')[0]);
    const manyHolds = (ids: string[]) => [
      ids,
      ids.map(() => input.workspaceId),
      ids.map(() => input.environment),
      ids.map(() => input.apiKeyId),
      ids.map(() => input.amountMicros.toString()),
      ids.map(() => input.subjectType),
      ids.map(() => randomUUID()),
    ];
    const batched = async (size: number, calls: number) => {
      const cpu = { hold: 0, resolve: 0 };
      const wall = { hold: 0n, resolve: 0n };
      const measure = async (figure: keyof typeof cpu, call: () => Promise<unknown>) => {
        const cpu0 = backendCpuNs();
        const wall0 = process.hrtime.bigint();
        await call();
        wall[figure] += process.hrtime.bigint() - wall0;
        cpu[figure] += backendCpuNs() - cpu0;
      };
      for (let c = 0; c < calls; c++) {
        const ids = Array.from({ length: size }, () => randomUUID());
        await measure('hold', () => client.query({ ...HOLD_MANY, values: manyHolds(ids) }));
        await measure('resolve', () => client.query({ ...RESOLVE_MANY, values: [ids, ids.map(() => '500'), ids.map(() => 'settled')] }));
      }
      const us = (ns: number | bigint) => Number(ns) / calls / 1000;
      const figures = (figure: keyof typeof cpu) => `${us(cpu[figure]).toFixed(0)} / ${(us(cpu[figure]) / size).toFixed(0)} | ${us(wall[figure]).toFixed(0)}`;
      return `| ${size} | ${figures('hold')} | ${figures('resolve')} |`;
    };
    await batched(8, WARM_UP);
    const batches: string[] = [];
    for (const size of BATCH_SIZES) batches.push(await batched(size, BATCH_CALLS));
    console.log(`\n### Batched calls by size (one call per group-commit batch)\n`);
    console.log(`${BATCH_CALLS} calls per size, back to back, after ${WARM_UP} unmeasured; PostgreSQL backend CPU per call / per item, and wall time per call, in µs.\n`);
    console.log('| batch | svc_hold_many: CPU per call / item | wall | svc_resolve_many: CPU per call / item | wall |');
    console.log('|---|---|---|---|---|');
    for (const line of batches) console.log(line);
  } finally {
    await client.end().catch(() => undefined);
    await t.close();
  }
});
