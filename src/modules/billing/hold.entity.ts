import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { KeyEnvironment } from '../identity/index.js';

export type HoldStatus = 'open' | 'settled' | 'released';

@Entity('hold')
export class HoldEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  environment!: KeyEnvironment;

  @Column('uuid', { name: 'api_key_id', nullable: true })
  apiKeyId!: string | null;

  @Column('bigint', { name: 'amount_micros', transformer: bigintTransformer })
  amountMicros!: bigint;

  /** What the client was finally charged (at most the hold: see WalletService.settle). */
  @Column('bigint', { name: 'captured_micros', transformer: bigintTransformer })
  capturedMicros!: bigint;

  /** Measured cost above the hold, not charged (recorded, logged and counted). */
  @Column('bigint', { name: 'uncollected_micros', transformer: bigintTransformer })
  uncollectedMicros!: bigint;

  @Column('text')
  status!: HoldStatus;

  @Column('text', { name: 'subject_type' })
  subjectType!: string;

  @Column('text', { name: 'subject_id' })
  subjectId!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'resolved_at', nullable: true })
  resolvedAt!: Date | null;
}
