import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** `live` keys draw on the real balance; `test` keys route every model to the sandbox. */
export type KeyEnvironment = 'live' | 'test';
export type ApiKeyStatus = 'active' | 'revoked';

@Entity('api_key')
export class ApiKeyEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'workspace_id' })
  workspaceId!: string;

  @Column('text')
  name!: string;

  @Column('text')
  environment!: KeyEnvironment;

  /** The first characters of the key, shown to people so they can tell keys apart. */
  @Column('text')
  prefix!: string;

  /** SHA-256 of the whole key; the key itself is never stored. */
  @Column('bytea', { name: 'secret_sha256' })
  secretSha256!: Buffer;

  @Column('text')
  status!: ApiKeyStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;
}
