import { Column, Entity } from 'typeorm';
import { PaidTaskColumns } from '../../database/paid-task-columns.js';
import type { ImageAspectRatio, ImageModelId, ImageSizeName } from '../../../libs/providers/index.js';
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
export class ImageGenerationEntity extends PaidTaskColumns {
  @Column('text')
  model!: ImageModelId;

  /** The adapter that served it (`gemini-image`, `sandbox`). */
  @Column('text')
  adapter!: string;

  @Column('jsonb')
  request!: ImageRequestSnapshot;

  @Column('text')
  status!: ImageGenerationStatus;

  @Column('text', { name: 'content_type', nullable: true })
  contentType!: string | null;
}
