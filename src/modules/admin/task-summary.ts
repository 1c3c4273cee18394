import { microsToUsd } from '../../../libs/common/index.js';
import type { AdminTaskSummary } from './task-directory.js';

/** The columns a domain's task row has in common, as the admin task list reads them. */
export interface SummarisableTask {
  id: string;
  workspaceId: string;
  apiKeyId: string;
  model: string;
  status: string;
  phase: string | null;
  chargedMicros: bigint | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One task row of `kind` as GET /admin/v1/tasks shows it (the charge in USD, unset until charged). */
export function toAdminTaskSummary(kind: string, task: SummarisableTask): AdminTaskSummary {
  return {
    id: task.id,
    kind,
    workspaceId: task.workspaceId,
    apiKeyId: task.apiKeyId,
    model: task.model,
    status: task.status,
    phase: task.phase,
    chargedUsd: task.chargedMicros === null ? null : microsToUsd(task.chargedMicros),
    failureReason: task.failureReason,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
  };
}
