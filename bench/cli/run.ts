// Operator CLI speed (issue 16, item 9): wall time of one command from process start to exit,
// as an operator sees it, against a database of its own (created and dropped here).
//   npm run bench:cli        Knob: BENCH_CLI_RUNS (default 10).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase } from '../../test/support/test-database.js';
import { describeMachine, percentile, runBench } from '../support/drive.js';

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);

runBench(async () => {
  const db = await createTestDatabase('benchcli');
  const env = { ...process.env, DATABASE_URL: db.url };
  const cli = (...args: string[]) => run(process.execPath, ['dist/src/cli/cli.js', ...args], { env });
  try {
    await cli('workspace:list'); // migrates the new database once
    const { stdout } = await cli('workspace:create', '--name', 'bench');
    const workspaceId = (JSON.parse(stdout) as { id: string }).id;
    console.log(describeMachine());
    for (const args of [['workspace:list', '--limit', '5'], ['wallet:show', '--workspace', workspaceId], ['help']]) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        await cli(...args);
        times.push(performance.now() - started);
      }
      console.log(`${args[0]!.padEnd(16)} p50 ${percentile(times, 50).toFixed(0)} ms  p90 ${percentile(times, 90).toFixed(0)} ms  (${RUNS} runs)`);
    }
  } finally {
    await db.drop();
  }
});
