import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhook endpoints of API keys (DESIGN §5 `webhook_endpoint`): the signing secret only sealed (AES-256-GCM). */
export class WebhookEndpoints1763800000900 implements MigrationInterface {
  name = 'WebhookEndpoints1763800000900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoint (
        id text PRIMARY KEY CHECK (id ~ '^webhook:[0-9a-f-]{36}$'),
        api_key_id uuid NOT NULL REFERENCES api_key (id),
        url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
        events text[] NOT NULL CHECK (cardinality(events) >= 1
          AND events <@ ARRAY['audio.generation.succeeded', 'audio.generation.failed']::text[]),
        enabled boolean NOT NULL DEFAULT true,
        secret_sealed text NOT NULL CHECK (secret_sealed LIKE 'v1:%'),
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    // The owner's list, newest first, and the per-key count under the creation lock.
    await q.query(`CREATE INDEX webhook_endpoint_owner ON webhook_endpoint (api_key_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_endpoint');
  }
}
