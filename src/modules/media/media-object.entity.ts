import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintTransformer } from '../../database/column-transformers.js';

/** One stored file. Rows hold keys, never URLs: links are minted on every read. */
@Entity('media_object')
export class MediaObjectEntity {
  @PrimaryColumn('text')
  key!: string;

  @Column('uuid', { name: 'workspace_id', nullable: true })
  workspaceId!: string | null;

  @Column('text', { name: 'content_type' })
  contentType!: string;

  @Column('bigint', { transformer: bigintTransformer })
  bytes!: bigint;

  /** Unguessable token of the public link mode (images); null when the object has none. */
  @Column('text', { name: 'public_token', nullable: true })
  publicToken!: string | null;

  /** Retention deadline; the sweeper deletes the file after it. Null keeps it. */
  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt!: Date | null;
}
