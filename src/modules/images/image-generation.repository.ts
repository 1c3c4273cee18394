import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, type QueryDeepPartialEntity, Repository } from 'typeorm';
import type { CursorPosition } from '../../../libs/common/index.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../../database/transaction.js';
import { ImageGenerationEntity, type ImageGenerationStatus } from './image-generation.entity.js';

export interface ImageGenerationListFilter {
  limit: number;
  after?: CursorPosition;
  status?: ImageGenerationStatus;
  workspaceId?: string;
}

/**
 * Every SQL statement of image generations. Moves out of `running` are compare-and-set, so the
 * request and the abandoned-request sweep cannot both end one generation.
 */
@Injectable()
export class ImageGenerationRepository {
  constructor(
    @InjectRepository(ImageGenerationEntity) private readonly rows: Repository<ImageGenerationEntity>,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** One transaction for the row and its hold. */
  transaction<T>(work: (tx: TransactionHandle) => Promise<T>): Promise<T> {
    return inTransaction(this.db, work);
  }

  async insert(tx: TransactionHandle, row: ImageGenerationEntity): Promise<void> {
    await entityManagerOf(tx).insert(ImageGenerationEntity, row);
  }

  findById(id: string): Promise<ImageGenerationEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** Ends a running generation; false when it had already ended (the sweep got there first). */
  async finish(id: string, changes: QueryDeepPartialEntity<ImageGenerationEntity>): Promise<boolean> {
    const result = await this.rows
      .createQueryBuilder()
      .update(ImageGenerationEntity)
      .set(changes)
      .where('id = :id AND status = :running', { id, running: 'running' })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Newest first, `limit + 1` rows (the extra one says more exist). */
  listAll(filter: ImageGenerationListFilter): Promise<ImageGenerationEntity[]> {
    const qb = this.rows.createQueryBuilder('g');
    if (filter.workspaceId !== undefined) qb.andWhere('g.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    if (filter.status !== undefined) qb.andWhere('g.status = :status', { status: filter.status });
    if (filter.after) {
      // The cursor's time has millisecond precision, the column microseconds: compare against the
      // cursor row's own created_at when it exists, so rows sharing that millisecond are not skipped.
      qb.andWhere(
        `(g.created_at, g.id) < (COALESCE((SELECT c.created_at FROM image_generation c WHERE c.id = :afterId), :afterAt), :afterId)`,
        { afterAt: filter.after.createdAt, afterId: filter.after.id },
      );
    }
    return qb.orderBy('g.created_at', 'DESC').addOrderBy('g.id', 'DESC').limit(filter.limit + 1).getMany();
  }

  /** Generations whose link has ended and whose image is still stored. */
  findExpiredMedia(now: Date, limit: number): Promise<ImageGenerationEntity[]> {
    return this.rows
      .createQueryBuilder('g')
      .where('g.media_key IS NOT NULL AND g.media_deleted_at IS NULL AND g.expires_at <= :now', { now })
      .orderBy('g.expires_at', 'ASC')
      .limit(limit)
      .getMany();
  }

  async markMediaDeleted(id: string, at: Date): Promise<void> {
    await this.rows.update({ id }, { mediaDeletedAt: at, updatedAt: at });
  }

  /** Generations still running that were created before `cutoff` (their process died mid-request). */
  findAbandoned(cutoff: Date, limit: number): Promise<ImageGenerationEntity[]> {
    return this.rows
      .createQueryBuilder('g')
      .where(`g.status = 'running' AND g.created_at < :cutoff`, { cutoff })
      .orderBy('g.created_at', 'ASC')
      .limit(limit)
      .getMany();
  }
}
