import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { KeyEnvironment } from '../identity/index.js';

/** One wallet per workspace and key environment (live money, test money). */
@Entity('wallet')
export class WalletEntity {
  @PrimaryColumn('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @PrimaryColumn('text')
  environment!: KeyEnvironment;

  @Column('bigint', { name: 'balance_micros', transformer: bigintTransformer })
  balanceMicros!: bigint;

  @Column('bigint', { name: 'held_micros', transformer: bigintTransformer })
  heldMicros!: bigint;

  @Column('bigint', { transformer: bigintTransformer })
  version!: bigint;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
