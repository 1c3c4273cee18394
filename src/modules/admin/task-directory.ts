import { Injectable } from '@nestjs/common';
import type { CursorPosition } from '../../../libs/common/index.js';

/** One task of any kind as the admin task list shows it. */
export interface AdminTaskSummary {
  id: string;
  kind: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  status: string;
  phase: string | null;
  chargedUsd: number | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AdminTaskFilter {
  status?: string;
  workspaceId?: string;
  /**
   * Rows strictly older than this position (newest first). `id` is the public task id of any
   * kind (`omni:…`, `audio:…`), so compare it as text, never cast it to uuid. `createdAt` has
   * millisecond precision while timestamptz has microseconds: compare against the cursor row's
   * own created_at when it is yours (as IdentityRepository does), else rows sharing that
   * millisecond are skipped.
   */
  after?: CursorPosition;
  limit: number;
}

/** A domain's tasks for the admin list; `list` returns up to `limit + 1` rows, newest first. */
export interface AdminTaskSource {
  kind: string;
  list(filter: AdminTaskFilter): Promise<AdminTaskSummary[]>;
  /** One task by its public id (`omni:…`, `audio:…`), null when it is not this kind's (GET /admin/v1/tasks/{id}). */
  get(id: string): Promise<AdminTaskSummary | null>;
}

/**
 * Domains (video, alternate video, audio, images) register their task sources here in
 * onModuleInit; GET /admin/v1/tasks merges them, newest first.
 */
@Injectable()
export class AdminTaskDirectory {
  private readonly sources = new Map<string, AdminTaskSource>();

  register(source: AdminTaskSource): void {
    this.sources.set(source.kind, source);
  }

  kinds(): string[] {
    return [...this.sources.keys()];
  }

  source(kind: string): AdminTaskSource | undefined {
    return this.sources.get(kind);
  }

  all(): AdminTaskSource[] {
    return [...this.sources.values()];
  }
}
