import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareNewestFirst, mergeTaskSources } from './admin-task-list.service.js';
import type { AdminTaskFilter, AdminTaskSource, AdminTaskSummary } from './task-directory.js';

function row(kind: string, ms: number, suffix: string): AdminTaskSummary {
  const at = new Date(ms);
  return {
    id: `${kind}:${suffix}`,
    kind,
    workspaceId: 'w',
    apiKeyId: 'k',
    model: 'm',
    status: 'queued',
    phase: null,
    chargedUsd: null,
    failureReason: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** Honours the source contract: rows after the cursor, newest first, at most limit + 1. */
function source(kind: string, rows: AdminTaskSummary[]): AdminTaskSource & { calls: AdminTaskFilter[] } {
  const calls: AdminTaskFilter[] = [];
  return {
    kind,
    calls,
    list: async (filter) => {
      calls.push(filter);
      return rows
        .filter((r) => !filter.after || compareNewestFirst(filter.after, r) < 0)
        .sort(compareNewestFirst)
        .slice(0, filter.limit + 1);
    },
    get: async (id) => rows.find((r) => r.id === id) ?? null,
  };
}

describe('compareNewestFirst', () => {
  it('orders by time descending, then id descending', () => {
    const rows = [row('a', 1, '1'), row('a', 3, '1'), row('b', 3, '2'), row('a', 2, '9')];
    assert.deepEqual(
      rows.sort(compareNewestFirst).map((r) => r.id),
      ['b:2', 'a:1', 'a:9', 'a:1'],
    );
  });
});

describe('mergeTaskSources', () => {
  const omni = [row('omni', 10, 'a'), row('omni', 40, 'b'), row('omni', 50, 'c')];
  const audio = [row('audio', 20, 'd'), row('audio', 50, 'e'), row('audio', 60, 'f')];
  const everything = [...omni, ...audio].sort(compareNewestFirst).map((r) => r.id);

  it('is an empty last page without sources', async () => {
    assert.deepEqual(await mergeTaskSources([], { limit: 20 }), { items: [], hasMore: false, nextCursor: null });
  });

  it('merges newest first and pages with the cursor of the last row', async () => {
    for (const limit of [1, 2, 4, 6, 7]) {
      const sources = [source('omni', omni), source('audio', audio)];
      const seen: string[] = [];
      let after: AdminTaskFilter['after'];
      for (let guard = 0; guard < 20; guard++) {
        const page = await mergeTaskSources(sources, { limit, after });
        assert.ok(page.items.length <= limit);
        seen.push(...page.items.map((i) => i.id));
        if (!page.hasMore) {
          assert.equal(page.nextCursor, null);
          break;
        }
        const last = page.items.at(-1)!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      assert.deepEqual(seen, everything, `limit ${limit}`);
    }
  });

  it('passes the filter to every source', async () => {
    const a = source('omni', omni);
    const b = source('audio', audio);
    await mergeTaskSources([a, b], { limit: 3, status: 'queued', workspaceId: 'w' });
    assert.deepEqual(a.calls, [{ limit: 3, status: 'queued', workspaceId: 'w' }]);
    assert.deepEqual(b.calls, a.calls);
  });
});
