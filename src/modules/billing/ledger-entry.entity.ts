import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../../database/column-transformers.js';
import type { KeyEnvironment } from '../identity/index.js';

/**
 * credit: balance +amount · hold: held +amount · capture: balance −amount, held −amount ·
 * release: held −amount · adjust: balance −amount: the charge of a hold a database crash lost
 * (svc_charge_lost_hold, migration 1763800001400), or, before migration 1763800000600, a charge
 * above the hold.
 * The two delta columns make "the sum of entries reproduces the wallet" a plain SUM.
 */
export type LedgerKind = 'credit' | 'hold' | 'capture' | 'release' | 'adjust';

@Entity('ledger_entry')
export class LedgerEntryEntity {
  @PrimaryColumn('bigint', { transformer: bigintTransformer })
  id!: bigint;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  environment!: KeyEnvironment;

  @Column('text')
  kind!: LedgerKind;

  @Column('bigint', { name: 'amount_micros', transformer: bigintTransformer })
  amountMicros!: bigint;

  @Column('bigint', { name: 'balance_delta_micros', transformer: bigintTransformer })
  balanceDeltaMicros!: bigint;

  @Column('bigint', { name: 'held_delta_micros', transformer: bigintTransformer })
  heldDeltaMicros!: bigint;

  @Column('uuid', { name: 'hold_id', nullable: true })
  holdId!: string | null;

  @Column('text', { name: 'subject_type', nullable: true })
  subjectType!: string | null;

  @Column('text', { name: 'subject_id', nullable: true })
  subjectId!: string | null;

  @Column('text', { nullable: true })
  reference!: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;
}
