import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Omni video tasks and the `gs://` prefixes registered per workspace. */
export class Video1763800000100 implements MigrationInterface {
  name = 'Video1763800000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE video_task (
        id text PRIMARY KEY CHECK (id ~ '^omni:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        model text NOT NULL,
        mode text NOT NULL,
        request jsonb NOT NULL,
        adapter text NOT NULL,
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
        phase text,
        upstream_operation text,
        submit_attempts integer NOT NULL DEFAULT 0,
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
    // Owner listing, newest first with a stable tie-break (cursor paging).
    await q.query(`CREATE INDEX video_task_owner ON video_task (api_key_id, created_at DESC, id DESC)`);
    // Admin listing across workspaces.
    await q.query(`CREATE INDEX video_task_created ON video_task (created_at DESC, id DESC)`);
    // The reconciler reads every unfinished task.
    await q.query(`CREATE INDEX video_task_pending ON video_task (created_at) WHERE status IN ('queued', 'running')`);
    // Retention: finished tasks whose media is still stored.
    await q.query(`CREATE INDEX video_task_retention ON video_task (expires_at) WHERE media_key IS NOT NULL AND media_deleted_at IS NULL`);

    await q.query(`
      CREATE TABLE video_gcs_prefix (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        prefix text NOT NULL,
        created_at timestamptz NOT NULL,
        UNIQUE (workspace_id, prefix)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE video_gcs_prefix');
    await q.query('DROP TABLE video_task');
  }
}
