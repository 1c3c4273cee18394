import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Saved voices: an API key's favourite official voices, each with an optional alias unique per key. */
export class SavedVoices1763800000800 implements MigrationInterface {
  name = 'SavedVoices1763800000800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE saved_voice (
        id uuid PRIMARY KEY,
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        voice_id text NOT NULL CHECK (voice_id ~ '^[A-Za-z0-9]{1,64}$'),
        alias text CHECK (alias ~ '^[a-z0-9_-]{1,64}$'),
        adapter text NOT NULL,
        voice jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        UNIQUE (api_key_id, voice_id)
      )`);
    // An alias names one voice per key; keys without aliases are not constrained.
    await q.query(`CREATE UNIQUE INDEX saved_voice_alias ON saved_voice (api_key_id, alias) WHERE alias IS NOT NULL`);
    // The owner's list, newest first.
    await q.query(`CREATE INDEX saved_voice_owner ON saved_voice (api_key_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE saved_voice');
  }
}
