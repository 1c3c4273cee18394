import { Column, Entity } from 'typeorm';
import { PaidTaskColumns } from '../../database/paid-task-columns.js';
import type { AlternateAspectRatio, AlternateKind, AlternateMode } from '../../../libs/providers/index.js';
import { bigintTransformer } from '../../database/column-transformers.js';

export type AlternateTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/**
 * Where a non-terminal task is:
 * - `creating`: the row is committed and the upstream create is being sent by the API request;
 * - `reconciliationRequired`: the create's answer was lost; the task is looked up by our id
 *   (`external_task_id`), never created again (shown to clients);
 * - `generating`: the upstream accepted it; polling and callbacks report its progress;
 * - `storing`: the upstream finished; the worker downloads, measures, stores and settles;
 * - `failing`: the failure is recorded and the hold is being released.
 */
export type AlternateTaskPhase = 'creating' | 'reconciliationRequired' | 'generating' | 'storing' | 'failing';

export const ACTIVE_STATUSES: readonly AlternateTaskStatus[] = ['queued', 'running'];
export const TERMINAL_STATUSES: readonly AlternateTaskStatus[] = ['succeeded', 'failed'];

/** The accepted request: never image bytes, never a URL's query string (signed URLs carry secrets there). */
export interface AlternateRequestSnapshot {
  kind: AlternateKind;
  prompt: string;
  negativePrompt?: string;
  aspectRatio: AlternateAspectRatio;
  image?: ImageSummary;
  imageTail?: ImageSummary;
}

export interface ImageSummary {
  source: 'url' | 'base64';
  /** Origin and path of a URL image. */
  location?: string;
  mimeType: 'image/jpeg' | 'image/png';
  bytes: number;
}

@Entity('alternate_task')
export class AlternateTaskEntity extends PaidTaskColumns {
  @Column('text')
  model!: string;

  @Column('text')
  mode!: AlternateMode;

  @Column('int', { name: 'duration_seconds' })
  durationSeconds!: 5 | 10;

  @Column('jsonb')
  request!: AlternateRequestSnapshot;

  /** The adapter chosen at creation (`kling`, `sandbox`); the task keeps it to the end. */
  @Column('text')
  adapter!: string;

  @Column('text')
  status!: AlternateTaskStatus;

  @Column('text', { nullable: true })
  phase!: AlternateTaskPhase | null;

  @Column('text', { name: 'upstream_task_id', nullable: true })
  upstreamTaskId!: string | null;

  /** The upstream's last reported `task_status` (diagnostics only). */
  @Column('text', { name: 'upstream_status', nullable: true })
  upstreamStatus!: string | null;

  /** Where the upstream serves the finished video (from a poll or a callback). */
  @Column('text', { name: 'result_url', nullable: true })
  resultUrl!: string | null;

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
