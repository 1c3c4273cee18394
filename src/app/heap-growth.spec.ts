import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { heapGrowingFlag } from './heap-growth.js';

/**
 * In a fresh node: applies the given percent at run time (as createApp does), then churns
 * garbage around a live set of 150,000 to 300,000 small objects (some 50 to 90 MB), then keeps
 * 200 MB alive (ten 20 MiB arrays of doubles, in the heap). Prints the largest old space seen
 * while churning and the heap holding the 200 MB, in MB. The mechanism is what is checked, so
 * the percent is one that separates clearly from V8's own factor (25), not the default.
 */
const churn = (percent: number): { churnOldMb: number; retainedHeapMb: number } => {
  const script = `
    import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
    import { applyHeapGrowth } from ${JSON.stringify(new URL('./heap-growth.js', import.meta.url).href)};
    applyHeapGrowth(${percent});
    const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_size;
    let live = [];
    let churnOld = 0;
    for (let i = 0; i < 1_500_000; i++) {
      live.push({ text: 'x'.repeat(40) + i, pair: [i, i + 1] });
      if (live.length > 300_000) live = live.slice(150_000);
      if (i % 20_000 === 0) churnOld = Math.max(churnOld, oldSpace());
    }
    live = null;
    const kept = Array.from({ length: 10 }, (_, i) => new Array(20 * 1024 * 1024 / 8).fill(i + 0.5));
    console.log(JSON.stringify({ churnOldMb: churnOld / 1048576, retainedHeapMb: getHeapStatistics().total_heap_size / 1048576, kept: kept.length }));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { churnOldMb: number; retainedHeapMb: number };
};

describe('heap growth: garbage collected sooner, the heap not capped', () => {
  it('sets the flag unless the percent is 0 or node was given its own', () => {
    assert.equal(heapGrowingFlag(25, []), '--heap-growing-percent=25');
    assert.equal(heapGrowingFlag(0, []), null);
    assert.equal(heapGrowingFlag(25, ['--heap-growing-percent=50']), null);
    assert.equal(heapGrowingFlag(25, ['--heap_growing_percent=50']), null);
    assert.equal(heapGrowingFlag(25, ['--max-old-space-size=512']), '--heap-growing-percent=25');
  });

  it('applied at run time, keeps the old space near the live set under churn and still holds 200 MB', () => {
    const tuned = churn(25);
    const untuned = churn(0);
    // V8's own factor lets the old space reach about three times the live set.
    assert.ok(tuned.churnOldMb < 160, `old space ${tuned.churnOldMb.toFixed(0)} MB with 25%`);
    assert.ok(tuned.churnOldMb < untuned.churnOldMb / 1.5, `old space ${tuned.churnOldMb.toFixed(0)} MB with 25%, ${untuned.churnOldMb.toFixed(0)} MB without`);
    // No cap: ten 20 MiB arrays stay alive.
    assert.ok(tuned.retainedHeapMb > 200, `heap ${tuned.retainedHeapMb.toFixed(0)} MB holding 200 MB`);
  });
});
