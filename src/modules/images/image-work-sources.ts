import { Injectable, type OnModuleInit } from '@nestjs/common';
import { microsToUsd } from '../../../libs/common/index.js';
import { AdminTaskDirectory, type AdminTaskSummary } from '../admin/index.js';
import { IMAGE_GENERATION_STATUSES, type ImageGenerationEntity, type ImageGenerationStatus } from './image-generation.entity.js';
import { ImageGenerationRepository } from './image-generation.repository.js';

/**
 * The admin task list's `kind=image`. Generations are synchronous, so there is no queue and no
 * reconciler source: a generation that a dead process left `running` is ended by ImageRetention.
 */
@Injectable()
export class ImageWorkSources implements OnModuleInit {
  constructor(
    private readonly rows: ImageGenerationRepository,
    private readonly directory: AdminTaskDirectory,
  ) {}

  onModuleInit(): void {
    this.directory.register({
      kind: 'image',
      list: async (filter) => {
        // Another kind's status (`queued`) matches no image generation.
        if (filter.status !== undefined && !(IMAGE_GENERATION_STATUSES as readonly string[]).includes(filter.status)) return [];
        const rows = await this.rows.listAll({ limit: filter.limit, after: filter.after, status: filter.status as ImageGenerationStatus | undefined, workspaceId: filter.workspaceId });
        return rows.map(toSummary);
      },
      get: async (id) => {
        const row = id.startsWith('image:') ? await this.rows.findById(id) : null;
        return row ? toSummary(row) : null;
      },
    });
  }
}

function toSummary(row: ImageGenerationEntity): AdminTaskSummary {
  return {
    id: row.id,
    kind: 'image',
    workspaceId: row.workspaceId,
    apiKeyId: row.apiKeyId,
    model: row.model,
    status: row.status,
    phase: null,
    chargedUsd: row.chargedMicros === null ? null : microsToUsd(row.chargedMicros),
    failureReason: row.failureReason,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
