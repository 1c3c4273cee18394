import { Column, PrimaryColumn } from 'typeorm';
import type { KeyEnvironment } from '../modules/identity/index.js';
import { bigintTransformer } from './column-transformers.js';

/**
 * The columns every paid task table has the same way (video, audio, image, alternate video): the
 * owner, the hold and the charge, the failure, the stored media and its retention, the timestamps.
 * Each domain's entity extends it with its model, status, phase, request and usage (TypeORM takes
 * columns declared on a plain abstract parent); the tables themselves are each domain's migration.
 */
export abstract class PaidTaskColumns {
  /** `<kind>:<uuid>` (`omni:`, `audio:`, `image:`, `alt:`). */
  @PrimaryColumn('text')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  environment!: KeyEnvironment;

  @Column('uuid', { name: 'hold_id' })
  holdId!: string;

  @Column('bigint', { name: 'charged_micros', nullable: true, transformer: bigintTransformer })
  chargedMicros!: bigint | null;

  @Column('text', { name: 'failure_reason', nullable: true })
  failureReason!: string | null;

  @Column('text', { name: 'media_key', nullable: true })
  mediaKey!: string | null;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt!: Date | null;

  /** Media retention deadline: seven days after completion (video, audio), 24 h after generation (images). */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'media_deleted_at', nullable: true })
  mediaDeletedAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}

/**
 * A new task's shared columns: its owner, and nothing held, charged, failed, stored or expired
 * yet (`holdId` is set by the creation, with its hold). Domains build rows with `newPaidTaskRow`.
 */
export function newPaidTaskColumns(id: string, owner: { id: string; workspaceId: string; environment: KeyEnvironment }, now: Date): PaidTaskColumns {
  return {
    id,
    apiKeyId: owner.id,
    workspaceId: owner.workspaceId,
    environment: owner.environment,
    holdId: '',
    chargedMicros: null,
    failureReason: null,
    mediaKey: null,
    completedAt: null,
    expiresAt: null,
    mediaDeletedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * A new task row of `entity`: the shared columns of a new task (`newPaidTaskColumns`), then the
 * domain's own (`own`, checked complete). Assigned one after the other rather than spread into one
 * literal: V8 (Node 20) built such a literal, a spread followed by a dozen more properties, in
 * about 40 µs, against 1 µs for this (docs/benchmarks.md › Issue 17 figures).
 */
export function newPaidTaskRow<E extends PaidTaskColumns>(
  entity: new () => E,
  id: string,
  owner: { id: string; workspaceId: string; environment: KeyEnvironment },
  now: Date,
  own: Omit<E, keyof PaidTaskColumns>,
): E {
  return Object.assign(new entity(), newPaidTaskColumns(id, owner, now), own);
}
