import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Audio generation tasks and the idempotency keys of their creation (DESIGN §5, §6). */
export class Audio1763800000700 implements MigrationInterface {
  name = 'Audio1763800000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audio_task (
        id text PRIMARY KEY CHECK (id ~ '^audio:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        model text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('text_to_speech', 'text_to_dialogue')),
        endpoint text NOT NULL CHECK (endpoint IN ('generations', 'speech')),
        request jsonb NOT NULL,
        adapter text NOT NULL,
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing', 'succeeded', 'failed', 'cancelled')),
        phase text CHECK (phase IN ('synthesizing', 'reconciliationRequired', 'storing', 'failing')),
        attempts integer NOT NULL DEFAULT 0,
        submitted_at timestamptz,
        media_key text,
        content_type text,
        media_bytes bigint,
        output_seconds double precision,
        input_characters integer NOT NULL CHECK (input_characters > 0),
        billable_characters integer CHECK (billable_characters >= 0),
        charged_micros bigint,
        hold_id uuid NOT NULL,
        webhook_endpoint_id text,
        failure_reason text,
        completed_at timestamptz,
        expires_at timestamptz,
        media_deleted_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    // Owner listing, newest first with a stable tie-break (cursor paging).
    await q.query(`CREATE INDEX audio_task_owner ON audio_task (api_key_id, created_at DESC, id DESC)`);
    // Admin listing across workspaces.
    await q.query(`CREATE INDEX audio_task_created ON audio_task (created_at DESC, id DESC)`);
    // The reconciler reads every unfinished task; creation counts a key's unfinished tasks.
    await q.query(`CREATE INDEX audio_task_pending ON audio_task (api_key_id, created_at) WHERE status IN ('queued', 'processing')`);
    // Retention: finished tasks whose media is still stored.
    await q.query(`CREATE INDEX audio_task_retention ON audio_task (expires_at) WHERE media_key IS NOT NULL AND media_deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE audio_idempotency (
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        endpoint text NOT NULL CHECK (endpoint IN ('generations', 'speech')),
        key text NOT NULL CHECK (length(key) BETWEEN 1 AND 128),
        request_hash text NOT NULL,
        task_id text NOT NULL REFERENCES audio_task (id),
        created_at timestamptz NOT NULL,
        PRIMARY KEY (api_key_id, endpoint, key)
      )`);
    // The sweep deletes records past their 24 hours.
    await q.query(`CREATE INDEX audio_idempotency_created ON audio_idempotency (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audio_idempotency');
    await q.query('DROP TABLE audio_task');
  }
}
