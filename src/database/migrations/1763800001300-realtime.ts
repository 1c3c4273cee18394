import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Realtime sessions (docs/realtime.md): the session with its budget, its one-use connection
 * tickets (only SHA-256 hashes are stored), and its turns (turn id → the audio task it created,
 * with the hash of its text, so a repeat finds the same task). Turns are audio tasks: their
 * `audio_task.endpoint` is `realtime`.
 */
export class Realtime1763800001300 implements MigrationInterface {
  name = 'Realtime1763800001300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE realtime_session (
        id text PRIMARY KEY CHECK (id ~ '^session:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        workspace_id uuid NOT NULL,
        environment text NOT NULL,
        model text NOT NULL,
        voice text NOT NULL CHECK (char_length(voice) BETWEEN 1 AND 128),
        voice_id text NOT NULL,
        output_format text NOT NULL,
        max_cost_micros bigint NOT NULL CHECK (max_cost_micros > 0),
        allocated_micros bigint NOT NULL DEFAULT 0 CHECK (allocated_micros >= 0 AND allocated_micros <= max_cost_micros),
        expires_at timestamptz NOT NULL,
        closed_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    // The per-key count of open sessions under the creation lock.
    await q.query(`CREATE INDEX realtime_session_open ON realtime_session (api_key_id, expires_at) WHERE closed_at IS NULL`);
    await q.query(`
      CREATE TABLE realtime_ticket (
        token_hash bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
        session_id text NOT NULL REFERENCES realtime_session (id),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX realtime_ticket_session ON realtime_ticket (session_id)`);
    await q.query(`
      CREATE TABLE realtime_turn (
        session_id text NOT NULL REFERENCES realtime_session (id),
        turn_id text NOT NULL CHECK (turn_id ~ '^[A-Za-z0-9_-]{1,80}$'),
        text_hash bytea NOT NULL CHECK (octet_length(text_hash) = 32),
        task_id text NOT NULL UNIQUE,
        estimated_micros bigint NOT NULL CHECK (estimated_micros >= 0),
        created_at timestamptz NOT NULL,
        PRIMARY KEY (session_id, turn_id)
      )`);
    await q.query(`ALTER TABLE audio_task DROP CONSTRAINT audio_task_endpoint_check`);
    await q.query(`ALTER TABLE audio_task ADD CONSTRAINT audio_task_endpoint_check CHECK (endpoint IN ('generations', 'speech', 'realtime'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE realtime_turn`);
    await q.query(`DROP TABLE realtime_ticket`);
    await q.query(`DROP TABLE realtime_session`);
    await q.query(`UPDATE audio_task SET endpoint = 'speech' WHERE endpoint = 'realtime'`);
    await q.query(`ALTER TABLE audio_task DROP CONSTRAINT audio_task_endpoint_check`);
    await q.query(`ALTER TABLE audio_task ADD CONSTRAINT audio_task_endpoint_check CHECK (endpoint IN ('generations', 'speech'))`);
  }
}
