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
// Needs local PostgreSQL and Redis, like the tests. Run: npm run bench:wallet (builds into dist/ first). Knobs: N (2000), GAP_MS (1).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { HoldInput } from '../../src/modules/billing/wallet.repository.js';
import { HOLD, RESOLVE } from '../../src/modules/billing/wallet.repository.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { createAccount } from '../../test/support/factories.js';
import { bootTestApp } from '../../test/support/test-app.js';
import { describeMachine, percentile, runBench } from '../support/drive.js';

const N = Number(process.env.N ?? 2000);
const GAP_MS = Number(process.env.GAP_MS ?? 1);
const WARM_UP = 300;

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
  } finally {
    await client.end().catch(() => undefined);
    await t.close();
  }
});
