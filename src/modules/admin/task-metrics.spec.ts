import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../libs/common/index.js';
import { Metrics } from '../../observability/metrics.service.js';
import type { WalletService } from '../billing/index.js';
import { AdminTaskListService, OVERVIEW_SCAN_LIMIT } from './admin-task-list.service.js';
import { AdminTaskDirectory, type AdminTaskSource, type AdminTaskSummary } from './task-directory.js';
import { AdminTaskMetrics, TASK_COUNTS_TTL_MS } from './task-metrics.js';

const NOW = new Date('2026-11-24T12:00:00Z');

function task(kind: string, status: string, minutesAgo: number, n: number): AdminTaskSummary {
  const at = new Date(NOW.getTime() - minutesAgo * 60_000);
  return { id: `${kind}:${n}`, kind, workspaceId: 'w', apiKeyId: 'k', model: 'm', status, phase: null, chargedUsd: null, failureReason: null, createdAt: at, updatedAt: at };
}

/** A task kind as a domain registers it: newest first, at most limit + 1 rows; `failing` makes its reads throw. */
function source(kind: string, rows: AdminTaskSummary[]): AdminTaskSource & { reads: number; failing: boolean } {
  const self = {
    kind,
    reads: 0,
    failing: false,
    list: async (filter: { limit: number }) => {
      self.reads += 1;
      if (self.failing) throw new Error('database unreachable');
      return [...rows].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).slice(0, filter.limit + 1);
    },
    get: async () => null,
  };
  return self;
}

function setUp(...sources: AdminTaskSource[]) {
  const clock = new ManualClock(NOW);
  const metrics = new Metrics();
  const directory = new AdminTaskDirectory();
  for (const s of sources) directory.register(s);
  // countSince reads only the directory; the wallet is for task details.
  const taskMetrics = new AdminTaskMetrics(metrics, new AdminTaskListService(directory, {} as WalletService), clock);
  taskMetrics.onModuleInit();
  const scrape = async () => {
    const text = await metrics.registry.metrics();
    return text.split('\n').filter((line) => line.startsWith('svc_tasks_last_hour'));
  };
  return { clock, scrape };
}

describe('AdminTaskMetrics (svc_tasks_last_hour)', () => {
  it('counts the last hour by kind and status, once per 10 s however many scrapes', async () => {
    const audio = source('audio', [task('audio', 'succeeded', 5, 1), task('audio', 'succeeded', 30, 2), task('audio', 'failed', 50, 3), task('audio', 'succeeded', 70, 4)]);
    const video = source('video', [task('video', 'queued', 1, 1)]);
    const { clock, scrape } = setUp(audio, video);

    const [first, second] = await Promise.all([scrape(), scrape()]);
    assert.deepEqual(first, [
      'svc_tasks_last_hour{kind="audio",status="failed"} 1',
      'svc_tasks_last_hour{kind="audio",status="succeeded"} 2',
      'svc_tasks_last_hour{kind="video",status="queued"} 1',
      'svc_tasks_last_hour_capped{kind="audio"} 0',
      'svc_tasks_last_hour_capped{kind="video"} 0',
    ]);
    assert.deepEqual(second, first);
    assert.deepEqual([audio.reads, video.reads], [1, 1], 'two scrapes, one read of each kind');

    clock.advance(TASK_COUNTS_TTL_MS - 1);
    await scrape();
    assert.equal(audio.reads, 1, 'still within the cache');
    clock.advance(1);
    await scrape();
    assert.equal(audio.reads, 2, 'read again once 10 s old');

    // 40 minutes on: the audio task of 5 minutes ago (now 45) and the video task are in the hour;
    // the failed audio task is not, and its series reads 0 instead of vanishing.
    clock.advance(40 * 60_000);
    assert.deepEqual(await scrape(), [
      'svc_tasks_last_hour{kind="audio",status="failed"} 0',
      'svc_tasks_last_hour{kind="audio",status="succeeded"} 1',
      'svc_tasks_last_hour{kind="video",status="queued"} 1',
      'svc_tasks_last_hour_capped{kind="audio"} 0',
      'svc_tasks_last_hour_capped{kind="video"} 0',
    ]);
  });

  it('keeps the last values when a read fails, and reads again on the next scrape', async () => {
    const audio = source('audio', [task('audio', 'succeeded', 1, 1)]);
    const { clock, scrape } = setUp(audio);
    const good = await scrape();
    clock.advance(TASK_COUNTS_TTL_MS);
    audio.failing = true;
    assert.deepEqual(await scrape(), good, 'the scrape answers, with the last values');
    assert.equal(audio.reads, 2);
    audio.failing = false;
    await scrape();
    assert.equal(audio.reads, 3, 'a failed read is not cached');
  });

  it('marks a kind capped when its hour holds more tasks than one count reads', async () => {
    const many = Array.from({ length: OVERVIEW_SCAN_LIMIT + 5 }, (_, n) => task('image', 'succeeded', 1, n));
    const { scrape } = setUp(source('image', many), source('audio', [task('audio', 'queued', 1, 1)]));
    assert.deepEqual(await scrape(), [
      'svc_tasks_last_hour{kind="audio",status="queued"} 1',
      `svc_tasks_last_hour{kind="image",status="succeeded"} ${OVERVIEW_SCAN_LIMIT}`,
      'svc_tasks_last_hour_capped{kind="audio"} 0',
      'svc_tasks_last_hour_capped{kind="image"} 1',
    ]);
  });
});
