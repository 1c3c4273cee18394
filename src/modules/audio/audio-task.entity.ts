import { Column, Entity, PrimaryColumn } from 'typeorm';
import { PaidTaskColumns } from '../../database/paid-task-columns.js';
import type { AudioMode, AudioModelId, AudioOutputFormat, SpeechInput } from '../../../libs/providers/index.js';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { AudioEndpoint } from './audio.constants.js';

export type AudioTaskStatus = 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled';

/**
 * Where an unfinished task is inside the worker. Only `reconciliationRequired` is shown to clients
 * (spec: keep polling, do not resubmit). `synthesizing`: the upstream call was sent by the run that
 * set it; a run that finds it there lost that answer. `storing`: the audio is in hand (stream).
 * `failing`: the reason is recorded, the hold is being resolved. `streaming`: an API process is
 * reading the upstream's stream (streaming speech) under `leaseExpiresAt`; found there past the
 * lease, that process died and the task is reconciled, never streamed or synthesized again.
 */
export type AudioTaskPhase = 'synthesizing' | 'streaming' | 'reconciliationRequired' | 'storing' | 'failing';

export const AUDIO_TERMINAL_STATUSES: readonly AudioTaskStatus[] = ['succeeded', 'failed', 'cancelled'];
/** Unfinished statuses: the triggers of migration AudioPendingCount count the same two per API key. */
export const AUDIO_PENDING_STATUSES = ['queued', 'processing'] as const satisfies readonly AudioTaskStatus[];

/** The request as accepted: voices already resolved to official ids, defaults filled in. */
export interface AudioRequestSnapshot {
  /** One entry for speech; the dialogue's lines in order. */
  inputs: SpeechInput[];
  outputFormat: AudioOutputFormat;
  languageCode?: string;
  seed?: number;
  applyTextNormalization?: 'auto' | 'on' | 'off';
}

@Entity('audio_task')
export class AudioTaskEntity extends PaidTaskColumns {
  @Column('text')
  model!: AudioModelId;

  @Column('text')
  mode!: AudioMode;

  /** Which route created it (`generations` or `speech`); streaming speech runs it in the request. */
  @Column('text')
  endpoint!: AudioEndpoint;

  @Column('jsonb')
  request!: AudioRequestSnapshot;

  /** The adapter chosen at creation (`elevenlabs`, `sandbox`); the task keeps it to the end. */
  @Column('text')
  adapter!: string;

  @Column('text')
  status!: AudioTaskStatus;

  @Column('text', { nullable: true })
  phase!: AudioTaskPhase | null;

  @Column('int')
  attempts!: number;

  @Column('timestamptz', { name: 'submitted_at', nullable: true })
  submittedAt!: Date | null;

  /** While `streaming`: until when the streaming process vouches for the task (it extends this as it goes). */
  @Column('timestamptz', { name: 'lease_expires_at', nullable: true })
  leaseExpiresAt!: Date | null;

  @Column('text', { name: 'content_type', nullable: true })
  contentType!: string | null;

  @Column('bigint', { name: 'media_bytes', nullable: true, transformer: bigintTransformer })
  mediaBytes!: bigint | null;

  @Column('double precision', { name: 'output_seconds', nullable: true })
  outputSeconds!: number | null;

  @Column('int', { name: 'input_characters' })
  inputCharacters!: number;

  @Column('int', { name: 'billable_characters', nullable: true })
  billableCharacters!: number | null;

  @Column('text', { name: 'webhook_endpoint_id', nullable: true })
  webhookEndpointId!: string | null;
}

/** One `Idempotency-Key` of one API key on one endpoint, and the task it decided (DESIGN §6). */
@Entity('audio_idempotency')
export class AudioIdempotencyEntity {
  @PrimaryColumn('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  @PrimaryColumn('text')
  endpoint!: AudioEndpoint;

  @PrimaryColumn('text')
  key!: string;

  @Column('text', { name: 'request_hash' })
  requestHash!: string;

  @Column('text', { name: 'task_id' })
  taskId!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
