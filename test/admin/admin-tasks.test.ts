import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { AdminModule } from '../../src/modules/admin/admin.module.js';
import { compareNewestFirst } from '../../src/modules/admin/admin-task-list.service.js';
import { AdminTaskDirectory, type AdminTaskFilter, type AdminTaskSource, type AdminTaskSummary } from '../../src/modules/admin/task-directory.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

const WORKSPACE_A = randomUUID();
const WORKSPACE_B = randomUUID();

/** A task source that keeps the directory's contract: filters, cursor, `limit + 1` rows newest first. */
class InMemoryTaskSource implements AdminTaskSource {
  readonly filters: AdminTaskFilter[] = [];
  constructor(
    readonly kind: string,
    readonly rows: AdminTaskSummary[],
  ) {}

  async list(filter: AdminTaskFilter): Promise<AdminTaskSummary[]> {
    this.filters.push(filter);
    return this.rows
      .filter((row) => filter.status === undefined || row.status === filter.status)
      .filter((row) => filter.workspaceId === undefined || row.workspaceId === filter.workspaceId)
      .filter((row) => !filter.after || compareNewestFirst(filter.after, row) < 0)
      .sort(compareNewestFirst)
      .slice(0, filter.limit + 1);
  }

  async get(id: string): Promise<AdminTaskSummary | null> {
    return this.rows.find((row) => row.id === id) ?? null;
  }
}

function task(kind: string, second: number, status: string, workspaceId: string): AdminTaskSummary {
  const createdAt = new Date(Date.UTC(2025, 0, 1, 0, 0, second));
  return {
    id: `${kind}:${randomUUID()}`,
    kind,
    workspaceId,
    apiKeyId: randomUUID(),
    model: `${kind}-model`,
    status,
    phase: null,
    chargedUsd: status === 'succeeded' ? 0.25 : null,
    failureReason: status === 'failed' ? 'upstream refused' : null,
    createdAt,
    updatedAt: createdAt,
  };
}

// Interleaved times, and two rows of different kinds at the same instant (tie broken by id).
const omni = new InMemoryTaskSource('omni', [
  task('omni', 1, 'succeeded', WORKSPACE_A),
  task('omni', 4, 'queued', WORKSPACE_B),
  task('omni', 5, 'failed', WORKSPACE_A),
  task('omni', 9, 'queued', WORKSPACE_A),
]);
const audio = new InMemoryTaskSource('audio', [
  task('audio', 2, 'succeeded', WORKSPACE_B),
  task('audio', 5, 'queued', WORKSPACE_A),
  task('audio', 7, 'succeeded', WORKSPACE_A),
]);

@Injectable()
class SampleTaskSources implements OnModuleInit {
  constructor(private readonly directory: AdminTaskDirectory) {}
  onModuleInit(): void {
    this.directory.register(omni);
    this.directory.register(audio);
  }
}

@Module({ imports: [AdminModule], providers: [SampleTaskSources] })
class SampleTaskSourcesModule {}

interface TaskBody {
  id: string;
  kind: string;
  workspaceId: string;
  status: string;
  createdAt: string;
  chargedUsd: number | null;
}
interface PageBody {
  items: TaskBody[];
  hasMore: boolean;
  nextCursor: string | null;
}

describe('GET /admin/v1/tasks with registered sources', () => {
  let t: TestApp;
  const everyRow = [...omni.rows, ...audio.rows].sort(compareNewestFirst);

  async function page(query: string): Promise<PageBody> {
    const response = await t.request(`/admin/v1/tasks${query}`, { admin: true });
    const body = (await response.json()) as PageBody;
    assert.equal(response.status, 200, JSON.stringify(body));
    return body;
  }

  async function walk(query: string, limit: number): Promise<TaskBody[]> {
    const items: TaskBody[] = [];
    let cursor: string | null = null;
    do {
      const body: PageBody = await page(`?limit=${limit}${query}${cursor ? `&after=${cursor}` : ''}`);
      items.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor);
    return items;
  }

  before(async () => {
    t = await bootTestApp({ label: 'admintasks', imports: [SampleTaskSourcesModule] });
  });
  after(async () => {
    await t.close();
  });

  it('merges every kind newest first', async () => {
    const body = await page('');
    assert.equal(body.hasMore, false);
    assert.deepEqual(
      body.items.map((i) => i.id),
      everyRow.map((r) => r.id),
    );
    assert.equal(body.items[0]!.createdAt, '2025-01-01T00:00:09.000Z');
    assert.equal(body.items.at(-1)!.chargedUsd, 0.25);
  });

  it('pages across kinds without gaps or duplicates', async () => {
    for (const limit of [1, 2, 3]) {
      const items = await walk('', limit);
      assert.deepEqual(
        items.map((i) => i.id),
        everyRow.map((r) => r.id),
        `limit ${limit}`,
      );
    }
  });

  it('filters by kind, status and workspace', async () => {
    assert.deepEqual(
      (await walk('&kind=audio', 2)).map((i) => i.id),
      everyRow.filter((r) => r.kind === 'audio').map((r) => r.id),
    );
    assert.deepEqual(
      (await page('?status=queued')).items.map((i) => i.id),
      everyRow.filter((r) => r.status === 'queued').map((r) => r.id),
    );
    assert.deepEqual(
      (await walk(`&workspaceId=${WORKSPACE_B}`, 1)).map((i) => i.id),
      everyRow.filter((r) => r.workspaceId === WORKSPACE_B).map((r) => r.id),
    );
    const combined = await page(`?kind=omni&status=queued&workspaceId=${WORKSPACE_A.toUpperCase()}`);
    assert.deepEqual(
      combined.items.map((i) => i.id),
      everyRow.filter((r) => r.kind === 'omni' && r.status === 'queued' && r.workspaceId === WORKSPACE_A).map((r) => r.id),
    );
    const last = omni.filters.at(-1)!;
    assert.deepEqual({ ...last }, { status: 'queued', workspaceId: WORKSPACE_A, after: undefined, limit: 20 });
  });

  it('names the known kinds when the kind is unknown', async () => {
    const response = await t.request('/admin/v1/tasks?kind=pottery', { admin: true });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'admin.invalid_field');
    assert.match(body.error.message, /^kind: /);
    assert.match(body.error.message, /omni/);
    assert.match(body.error.message, /audio/);
  });
});
