import { Injectable } from '@nestjs/common';
import { DEFAULT_PAGE_LIMIT, type CursorPosition, decodeCursor, invalidField, type Page, toPage } from '../../../libs/common/index.js';
import type { AdminTaskDto, TaskQueryDto } from './admin.dto.js';
import { AdminTaskDirectory, type AdminTaskFilter, type AdminTaskSource, type AdminTaskSummary } from './task-directory.js';

/** Newest first; ties on the creation time broken by id, as every source orders its rows. */
export function compareNewestFirst(a: CursorPosition, b: CursorPosition): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * One page across several sources: each gives up to `limit + 1` rows newest first after the
 * cursor, so the newest `limit + 1` of their union are exactly the merged page plus the row
 * that says more exist.
 */
export async function mergeTaskSources(sources: AdminTaskSource[], filter: AdminTaskFilter): Promise<Page<AdminTaskSummary>> {
  const lists = await Promise.all(sources.map((source) => source.list(filter)));
  const rows = lists.flat().sort(compareNewestFirst).slice(0, filter.limit + 1);
  return toPage(rows, filter.limit, (row) => row);
}

/** GET /admin/v1/tasks: every registered task kind (AdminTaskDirectory), merged. */
@Injectable()
export class AdminTaskListService {
  constructor(private readonly directory: AdminTaskDirectory) {}

  async list(query: TaskQueryDto): Promise<Page<AdminTaskDto>> {
    const sources = query.kind === undefined ? this.directory.all() : [this.sourceOf(query.kind)];
    return mergeTaskSources(sources, {
      status: query.status,
      workspaceId: query.workspaceId?.toLowerCase(),
      after: decodeCursor(query.after),
      limit: query.limit ?? DEFAULT_PAGE_LIMIT,
    });
  }

  private sourceOf(kind: string): AdminTaskSource {
    const source = this.directory.source(kind);
    if (source) return source;
    const known = this.directory.kinds();
    throw invalidField('kind', known.length ? `must be one of: ${known.join(', ')}` : 'no task kinds are registered yet');
  }
}
