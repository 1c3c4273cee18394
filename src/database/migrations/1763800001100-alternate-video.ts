import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Alternate-provider video tasks (DESIGN §5 `alternate_task`, §10) and the `webhook-id`s of the
 * internal callbacks already applied (a replay of one is a no-op).
 */
export class AlternateVideo1763800001100 implements MigrationInterface {
  name = 'AlternateVideo1763800001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE alternate_task (
        id text PRIMARY KEY CHECK (id ~ '^alt:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        model text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('std', 'pro')),
        duration_seconds integer NOT NULL CHECK (duration_seconds IN (5, 10)),
        request jsonb NOT NULL,
        adapter text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        phase text,
        upstream_task_id text,
        upstream_status text,
        result_url text,
        poll_attempts integer NOT NULL DEFAULT 0,
        poll_errors integer NOT NULL DEFAULT 0,
        submitted_at timestamptz,
        reconciled_at timestamptz,
        media_key text,
        media_bytes bigint,
        output_seconds double precision,
        charged_micros bigint,
        hold_id uuid NOT NULL,
        failure_reason text,
        completed_at timestamptz,
        expires_at timestamptz,
        media_deleted_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX alternate_task_owner ON alternate_task (api_key_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX alternate_task_created ON alternate_task (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX alternate_task_pending ON alternate_task (created_at) WHERE status IN ('queued', 'running')`);
    await q.query(`CREATE INDEX alternate_task_retention ON alternate_task (expires_at) WHERE media_key IS NOT NULL AND media_deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE alternate_callback_event (
        webhook_id text PRIMARY KEY,
        task_id text,
        received_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX alternate_callback_event_received ON alternate_callback_event (received_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE alternate_callback_event');
    await q.query('DROP TABLE alternate_task');
  }
}
