import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit } from './group-commit.js';

/** A `run` whose calls the test answers by hand, one at a time. */
function manualRun<I, O>() {
  const calls: Array<{ items: I[]; answer: (results: Array<O | PromiseLike<O>>) => void; fail: (error: unknown) => void }> = [];
  const run = (items: I[]) =>
    new Promise<Array<O | PromiseLike<O>>>((answer, fail) => {
      calls.push({ items, answer, fail });
    });
  return { calls, run };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('sends a lone request at once, in the same tick (no timer)', async () => {
    const { calls, run } = manualRun<number, string>();
    const group = new GroupCommit(run, 64);
    const result = group.submit(1);
    assert.equal(calls.length, 1, 'called synchronously by submit');
    assert.deepEqual(calls[0]!.items, [1]);
    calls[0]!.answer(['one']);
    assert.equal(await result, 'one');
    assert.deepEqual(group.counters(), { calls: 1, items: 1, largest: 1 });
  });

  it('queues while a call is in flight and sends everything queued in the next call, in arrival order, capped', async () => {
    const { calls, run } = manualRun<number, number>();
    const group = new GroupCommit(run, 3);
    const results = [1, 2, 3, 4, 5, 6].map((n) => group.submit(n));
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]!.items, [1]);
    calls[0]!.answer([10]);
    await tick();
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1]!.items, [2, 3, 4], 'at most maxBatch per call');
    const late = group.submit(7);
    assert.equal(calls.length, 2, 'nothing sent while a call is in flight');
    calls[1]!.answer([20, 30, Promise.resolve(40)]);
    await tick();
    assert.deepEqual(calls[2]!.items, [5, 6, 7]);
    calls[2]!.answer([50, 60, 70]);
    assert.deepEqual(await Promise.all([...results, late]), [10, 20, 30, 40, 50, 60, 70]);
    assert.deepEqual(group.counters(), { calls: 3, items: 7, largest: 3 });
  });

  it('while requests arrive together, those of one turn go together at its end; after four calls of one in a row, at once again', async () => {
    const { calls, run } = manualRun<number, number>();
    const group = new GroupCommit(run, 64);
    const first = [group.submit(1), group.submit(2), group.submit(3)];
    calls[0]!.answer([10]);
    await tick();
    assert.deepEqual(calls[1]!.items, [2, 3]);
    calls[1]!.answer([20, 30]);
    assert.deepEqual(await Promise.all(first), [10, 20, 30]);

    // A call carried two: the next requests wait for the end of the turn, together.
    const together = [group.submit(4), group.submit(5)];
    assert.equal(calls.length, 2, 'not sent by submit');
    await tick();
    assert.deepEqual(calls[2]!.items, [4, 5], 'one call for the turn');
    calls[2]!.answer([40, 50]);
    assert.deepEqual(await Promise.all(together), [40, 50]);

    // Lone requests: each still waits for the end of its turn, until four calls of one in a row.
    for (const n of [6, 7, 8, 9]) {
      const lone = group.submit(n);
      assert.equal(calls.length, n - 3, `request ${n} not sent by submit`);
      await tick();
      calls[n - 3]!.answer([n * 10]);
      assert.equal(await lone, n * 10);
    }
    const quiet = group.submit(10);
    assert.equal(calls.length, 8, 'sent by submit itself');
    calls[7]!.answer([100]);
    assert.equal(await quiet, 100);
  });

  it('a failed call fails every waiter of that batch only; the next batch goes on', async () => {
    const { calls, run } = manualRun<string, string>();
    const group = new GroupCommit(run, 64);
    const first = group.submit('a');
    const second = [group.submit('b'), group.submit('c')];
    calls[0]!.answer(['A']);
    await tick();
    const third = group.submit('d');
    calls[1]!.fail(new Error('connection terminated'));
    const settled = await Promise.allSettled(second);
    for (const s of settled) assert.equal(s.status === 'rejected' && (s.reason as Error).message, 'connection terminated');
    await tick();
    assert.deepEqual(calls[2]!.items, ['d']);
    calls[2]!.answer(['D']);
    assert.equal(await first, 'A');
    assert.equal(await third, 'D');
  });

  it('a per-item promise that rejects fails that item only', async () => {
    const { calls, run } = manualRun<string, string>();
    const group = new GroupCommit(run, 64);
    const a = group.submit('a');
    const rest = [group.submit('b'), group.submit('c')];
    calls[0]!.answer(['A']);
    await tick();
    calls[1]!.answer([Promise.reject(new Error('bad b')), 'C']);
    const [b, c] = await Promise.allSettled(rest);
    assert.equal(b!.status === 'rejected' && (b.reason as Error).message, 'bad b');
    assert.deepEqual(c, { status: 'fulfilled', value: 'C' });
    assert.equal(await a, 'A');
  });

  it('a wrong number of results fails the batch instead of answering the wrong waiter', async () => {
    const group = new GroupCommit<number, number>(async (items) => items.slice(1), 64);
    await assert.rejects(group.submit(1), /0 results for 1 items/);
  });
});
