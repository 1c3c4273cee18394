import { Injectable } from '@nestjs/common';
import { DEFAULT_PAGE_LIMIT, type CursorPosition, decodeCursor, invalidField, isStorableText, microsToUsd, notFound, type Page, toPage } from '../../../libs/common/index.js';
import { type HoldSummary, WalletService } from '../billing/index.js';
import type { AdminTaskDetailDto, AdminTaskDto, TaskQueryDto } from './admin.dto.js';
import { toLedgerEntry } from './admin.service.js';
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

/** Tasks created in a window, by kind and status (the overview and the `svc_tasks_last_hour` gauge). */
export interface TaskCounts {
  counts: Array<{ kind: string; status: string; count: number }>;
  /** True when some kind had more tasks in the window than one count reads (see `cappedKinds`). */
  capped: boolean;
  /** The kinds whose counts are a lower bound (more than OVERVIEW_SCAN_LIMIT tasks in the window). */
  cappedKinds: string[];
}

/** Ledger entries a task detail shows. */
const DETAIL_LEDGER_LIMIT = 50;
/** Tasks per kind one overview reads to count the last hour (bounds the work of one request). */
export const OVERVIEW_SCAN_LIMIT = 1000;

/** GET /admin/v1/tasks: every registered task kind (AdminTaskDirectory), merged; one task's detail; the last hour's counts. */
@Injectable()
export class AdminTaskListService {
  constructor(
    private readonly directory: AdminTaskDirectory,
    private readonly wallets: WalletService,
  ) {}

  /** One task with its holds and ledger entries (found by the task id as the ledger's subject). */
  async detail(id: string): Promise<AdminTaskDetailDto> {
    // Too long, or text PostgreSQL cannot compare (a NUL): no task has that id.
    if (id.length > 200 || !isStorableText(id)) throw notFound('task');
    const found = (await Promise.all(this.directory.all().map((source) => source.get(id)))).find((task) => task !== null);
    if (!found) throw notFound('task');
    const entries = await this.wallets.listLedger(found.workspaceId, DETAIL_LEDGER_LIMIT, undefined, { subjectId: found.id });
    const holdIds = [...new Set(entries.map((entry) => entry.holdId).filter((holdId): holdId is string => holdId !== null))];
    const holds = (await this.wallets.holds(holdIds)).filter((hold) => hold.subjectId === found.id);
    const sum = (pick: (hold: HoldSummary) => bigint) => microsToUsd(holds.reduce((total, hold) => total + pick(hold), 0n));
    return {
      ...found,
      usage: {
        heldUsd: sum((hold) => (hold.status === 'open' ? hold.amountMicros : 0n)),
        chargedUsd: sum((hold) => hold.capturedMicros),
        measuredUsd: sum((hold) => hold.capturedMicros + hold.uncollectedMicros),
      },
      holds: holds.map((hold) => ({
        id: hold.id,
        environment: hold.environment,
        status: hold.status,
        amountUsd: microsToUsd(hold.amountMicros),
        capturedUsd: microsToUsd(hold.capturedMicros),
        uncollectedUsd: microsToUsd(hold.uncollectedMicros),
        createdAt: hold.createdAt,
        resolvedAt: hold.resolvedAt,
      })),
      ledger: entries.slice(0, DETAIL_LEDGER_LIMIT).map(toLedgerEntry),
    };
  }

  /**
   * Tasks created since `since`, by kind and status: each kind's newest tasks, at most
   * OVERVIEW_SCAN_LIMIT of them (`cappedKinds` had more, so their counts are a lower bound;
   * `capped` says whether any kind did).
   */
  async countSince(since: Date): Promise<TaskCounts> {
    const cappedKinds: string[] = [];
    const counts = new Map<string, { kind: string; status: string; count: number }>();
    await Promise.all(
      this.directory.all().map(async (source) => {
        const rows = await source.list({ limit: OVERVIEW_SCAN_LIMIT });
        const recent = rows.slice(0, OVERVIEW_SCAN_LIMIT).filter((row) => row.createdAt >= since);
        if (recent.length === OVERVIEW_SCAN_LIMIT) cappedKinds.push(source.kind);
        for (const row of recent) {
          const key = `${row.kind}\u0000${row.status}`;
          const entry = counts.get(key) ?? { kind: row.kind, status: row.status, count: 0 };
          entry.count += 1;
          counts.set(key, entry);
        }
      }),
    );
    const sorted = [...counts.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.status.localeCompare(b.status));
    return { counts: sorted, capped: cappedKinds.length > 0, cappedKinds: cappedKinds.sort() };
  }

  /** The registered task kinds, sorted. */
  kinds(): string[] {
    return this.directory.kinds().sort();
  }

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
