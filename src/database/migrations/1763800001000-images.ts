import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Synchronous image generations (DESIGN §5 `image_generation`): the request without image bytes, the hold, the stored image. */
export class Images1763800001000 implements MigrationInterface {
  name = 'Images1763800001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE image_generation (
        id text PRIMARY KEY CHECK (id ~ '^image:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        model text NOT NULL,
        adapter text NOT NULL,
        request jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
        hold_id uuid NOT NULL,
        media_key text,
        content_type text,
        charged_micros bigint CHECK (charged_micros >= 0),
        failure_reason text,
        completed_at timestamptz,
        expires_at timestamptz,
        media_deleted_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    // Admin listing across workspaces, newest first with a stable tie-break (cursor paging).
    await q.query(`CREATE INDEX image_generation_created ON image_generation (created_at DESC, id DESC)`);
    // Retention: generations whose image is still stored.
    await q.query(`CREATE INDEX image_generation_retention ON image_generation (expires_at) WHERE media_key IS NOT NULL AND media_deleted_at IS NULL`);
    // The abandoned-request sweep reads the generations still running.
    await q.query(`CREATE INDEX image_generation_running ON image_generation (created_at) WHERE status = 'running'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE image_generation');
  }
}
