import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ImageAspectRatio, ImageModelId, ImageSizeName } from '../../../libs/providers/index.js';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { KeyEnvironment } from '../identity/index.js';
import type { ReferenceSummary } from './image-references.js';

/** `running` from the hold until the answer; a generation never goes back. */
export type ImageGenerationStatus = 'running' | 'succeeded' | 'failed';
export const IMAGE_GENERATION_STATUSES: readonly ImageGenerationStatus[] = ['running', 'succeeded', 'failed'];

/** The request as accepted, without image bytes (references are summarised). */
export interface ImageRequestSnapshot {
  prompt?: string;
  size: ImageSizeName;
  /** Absent when an edit named none (the picture followed the references). */
  aspectRatio?: ImageAspectRatio;
  references: ReferenceSummary[];
  generationConfig?: Record<string, number>;
  safetySettings?: Array<Record<string, string>>;
}

@Entity('image_generation')
export class ImageGenerationEntity {
  @PrimaryColumn('text')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  environment!: KeyEnvironment;

  @Column('text')
  model!: ImageModelId;

  /** The adapter that served it (`gemini-image`, `sandbox`). */
  @Column('text')
  adapter!: string;

  @Column('jsonb')
  request!: ImageRequestSnapshot;

  @Column('text')
  status!: ImageGenerationStatus;

  @Column('uuid', { name: 'hold_id' })
  holdId!: string;

  @Column('text', { name: 'media_key', nullable: true })
  mediaKey!: string | null;

  @Column('text', { name: 'content_type', nullable: true })
  contentType!: string | null;

  @Column('bigint', { name: 'charged_micros', nullable: true, transformer: bigintTransformer })
  chargedMicros!: bigint | null;

  @Column('text', { name: 'failure_reason', nullable: true })
  failureReason!: string | null;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt!: Date | null;

  /** When the public link ends and the image is deleted: generation + 24 h. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'media_deleted_at', nullable: true })
  mediaDeletedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
