import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('workspace')
export class WorkspaceEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('text')
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
