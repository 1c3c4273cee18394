import { Column, Entity, PrimaryColumn } from 'typeorm';
import { PaidTaskColumns } from '../../database/paid-task-columns.js';
import type { VideoJobSpec, VideoMode } from '../../../libs/providers/index.js';
import { bigintTransformer } from '../../database/column-transformers.js';

export type VideoTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/**
 * Where a non-terminal task is inside the worker. Only `reconciliationRequired` is shown to
 * clients (as in the audio task): it means "keep polling, do not resubmit".
 */
export type VideoTaskPhase = 'validating' | 'submitting' | 'reconciliationRequired' | 'generating' | 'storing' | 'failing';

export const TERMINAL_STATUSES: readonly VideoTaskStatus[] = ['succeeded', 'failed'];

/** The creation request as accepted (defaults filled in, mode inferred). */
export interface VideoRequestSnapshot {
  prompt: string;
  mode: VideoMode;
  assets: {
    firstFrameImage?: string;
    lastFrameImage?: string;
    referenceImages?: string[];
    sourceVideo?: string;
    referenceVideos?: string[];
  };
  controls: { duration: number; resolution: VideoJobSpec['resolution']; ratio: VideoJobSpec['ratio']; generateAudio: true; outputCount: 1 };
}

@Entity('video_task')
export class VideoTaskEntity extends PaidTaskColumns {
  @Column('text')
  model!: string;

  @Column('text')
  mode!: VideoMode;

  @Column('jsonb')
  request!: VideoRequestSnapshot;

  /** The name of the adapter chosen at creation (`gemini-video`, `sandbox`, …); the task keeps it to the end. */
  @Column('text')
  adapter!: string;

  @Column('text')
  status!: VideoTaskStatus;

  @Column('text', { nullable: true })
  phase!: VideoTaskPhase | null;

  @Column('text', { name: 'upstream_operation', nullable: true })
  upstreamOperation!: string | null;

  @Column('int', { name: 'submit_attempts' })
  submitAttempts!: number;

  @Column('int', { name: 'poll_attempts' })
  pollAttempts!: number;

  @Column('int', { name: 'poll_errors' })
  pollErrors!: number;

  @Column('timestamptz', { name: 'submitted_at', nullable: true })
  submittedAt!: Date | null;

  @Column('timestamptz', { name: 'reconciled_at', nullable: true })
  reconciledAt!: Date | null;

  @Column('bigint', { name: 'media_bytes', nullable: true, transformer: bigintTransformer })
  mediaBytes!: bigint | null;

  @Column('double precision', { name: 'output_seconds', nullable: true })
  outputSeconds!: number | null;
}

@Entity('video_gcs_prefix')
export class VideoGcsPrefixEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  prefix!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
