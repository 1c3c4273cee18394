import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AudioModelId, AudioOutputFormat } from '../../../libs/providers/index.js';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { KeyEnvironment } from '../identity/index.js';

/** A realtime session of an API key (DESIGN §5 `realtime_session`): its voice, its budget, its lifetime. */
@Entity('realtime_session')
export class RealtimeSessionEntity {
  /** `session:<uuid>`, the public id. */
  @PrimaryColumn('text')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  environment!: KeyEnvironment;

  @Column('text')
  model!: AudioModelId;

  /** The voice as the client wrote it (an official id or a saved alias). */
  @Column('text')
  voice!: string;

  /** The official voice id it resolved to at creation: every turn speaks with it. */
  @Column('text', { name: 'voice_id' })
  voiceId!: string;

  @Column('text', { name: 'output_format' })
  outputFormat!: AudioOutputFormat;

  @Column('bigint', { name: 'max_cost_micros', transformer: bigintTransformer })
  maxCostMicros!: bigint;

  /** Sum of the estimates of the accepted turns; never decreases (spec › Limits). */
  @Column('bigint', { name: 'allocated_micros', transformer: bigintTransformer })
  allocatedMicros!: bigint;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  /** Set by DELETE; a closed session takes no ticket, connection or turn. */
  @Column('timestamptz', { name: 'closed_at', nullable: true })
  closedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}

/** A one-use connection ticket: only the SHA-256 of the token is kept. */
@Entity('realtime_ticket')
export class RealtimeTicketEntity {
  @PrimaryColumn('bytea', { name: 'token_hash' })
  tokenHash!: Buffer;

  @Column('text', { name: 'session_id' })
  sessionId!: string;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}

/** One committed turn of a session: the audio task it created, and the hash of its text. */
@Entity('realtime_turn')
export class RealtimeTurnEntity {
  @PrimaryColumn('text', { name: 'session_id' })
  sessionId!: string;

  @PrimaryColumn('text', { name: 'turn_id' })
  turnId!: string;

  @Column('bytea', { name: 'text_hash' })
  textHash!: Buffer;

  @Column('text', { name: 'task_id' })
  taskId!: string;

  /** The turn's estimate, allocated from the session budget (also its wallet hold). */
  @Column('bigint', { name: 'estimated_micros', transformer: bigintTransformer })
  estimatedMicros!: bigint;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
