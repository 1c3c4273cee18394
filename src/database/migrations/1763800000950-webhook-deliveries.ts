import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook events and their deliveries (docs/webhooks.md › Deliveries). An event is written in the
 * transaction that makes its audio task terminal (the outbox), with the exact payload bytes every
 * attempt sends. The delivery row holds the schedule (`next_attempt_at`): PostgreSQL is the truth,
 * a job only carries it. `claimed_until` is the claim of the attempt in flight.
 */
export class WebhookDeliveries1763800000950 implements MigrationInterface {
  name = 'WebhookDeliveries1763800000950';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_event (
        id text PRIMARY KEY,
        type text NOT NULL CHECK (type IN ('audio.generation.succeeded', 'audio.generation.failed')),
        task_id text NOT NULL,
        endpoint_id text NOT NULL,
        api_key_id uuid NOT NULL,
        payload text NOT NULL,
        created_at timestamptz NOT NULL,
        CONSTRAINT webhook_event_task_type_unique UNIQUE (task_id, type)
      )`);
    await q.query(`
      CREATE TABLE webhook_delivery (
        id text PRIMARY KEY,
        event_id text NOT NULL UNIQUE REFERENCES webhook_event (id),
        endpoint_id text NOT NULL,
        api_key_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        claimed_until timestamptz,
        manual boolean NOT NULL DEFAULT false,
        last_status_code integer,
        last_error text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX webhook_delivery_endpoint_newest ON webhook_delivery (endpoint_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_delivery_status_newest ON webhook_delivery (status, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX webhook_delivery_due ON webhook_delivery (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`
      CREATE TABLE webhook_delivery_attempt (
        delivery_id text NOT NULL REFERENCES webhook_delivery (id),
        attempt integer NOT NULL,
        manual boolean NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        error text,
        PRIMARY KEY (delivery_id, attempt)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_delivery_attempt`);
    await q.query(`DROP TABLE webhook_delivery`);
    await q.query(`DROP TABLE webhook_event`);
  }
}
