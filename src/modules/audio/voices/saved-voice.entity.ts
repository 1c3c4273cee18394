import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { VoiceInfo } from '../../../../libs/providers/index.js';

/** A voice an API key saved as a favourite (DESIGN §5 `saved_voice`): a binding, never a copy of the voice. */
@Entity('saved_voice')
export class SavedVoiceEntity {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  /** The official voice id. */
  @Column('text', { name: 'voice_id' })
  voiceId!: string;

  /** Unique per key when set; `a-z 0-9 _ -`, 1–64. */
  @Column('text', { nullable: true })
  alias!: string | null;

  /** The adapter whose catalogue answered the import (the voice belongs to its catalogue). */
  @Column('text')
  adapter!: string;

  /** The voice as the catalogue described it at the last import: the list answers from it (no upstream call per saved voice). */
  @Column('jsonb')
  voice!: VoiceInfo;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
