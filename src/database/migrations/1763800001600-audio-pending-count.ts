import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The number of unfinished (`queued`, `processing`: AUDIO_PENDING_STATUSES) audio tasks of each API
 * key, kept by triggers on `audio_task` (docs/decisions.md › A per-key counter of pending audio
 * tasks): a creation reads a few rows for the 429 limit, however many tasks the key has pending,
 * and no path that moves a task (worker, reconciler, streaming speech, an operator's SQL) can
 * forget it.
 *
 * A key's count is the sum of up to 16 rows (`slot`): each change goes to the slot of the
 * connection making it (its backend pid modulo 16), so completions of one key on different
 * connections do not queue on one row (measured: 16 connections completing tasks of one key made
 * 1,040 commits/s with a single row, against 2,700–3,300 without a counter). A slot may go
 * negative (a task created on one connection and finished on another); the sum is exact.
 *
 * - INSERT and DELETE: one statement-level trigger each, adding or subtracting per key what the
 *   statement inserted or deleted (a batch of creations is one upsert per key, in key order).
 * - UPDATE: a row-level constraint trigger, deferred to the commit, only for an update that moves a
 *   task into or out of the pending statuses (or to another key). At the commit it takes the
 *   counter row's lock after every other lock of its transaction, so a completion's listeners
 *   (AudioTaskEvents) cannot lock something in an order a creation would deadlock with.
 * - TRUNCATE: the counters start again from nothing.
 *
 * Rows whose count falls to 0 stay (the next change of their key and slot updates them in place).
 */
export class AudioPendingCount1763800001600 implements MigrationInterface {
  name = 'AudioPendingCount1763800001600';

  async up(q: QueryRunner): Promise<void> {
    // No write between the backfill and the triggers: both happen under this lock.
    await q.query(`LOCK TABLE audio_task IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`
      CREATE TABLE audio_pending_count (
        api_key_id uuid NOT NULL REFERENCES api_key (id) ON DELETE CASCADE,
        slot smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
        pending integer NOT NULL,
        PRIMARY KEY (api_key_id, slot)
      )`);

    await q.query(`
      CREATE FUNCTION svc_audio_pending_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO audio_pending_count AS c (api_key_id, slot, pending)
          SELECT api_key_id, pg_backend_pid() % 16, count(*) FROM inserted WHERE status IN ('queued', 'processing') GROUP BY api_key_id ORDER BY api_key_id
          ON CONFLICT (api_key_id, slot) DO UPDATE SET pending = c.pending + excluded.pending;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER audio_pending_inserted AFTER INSERT ON audio_task
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION svc_audio_pending_inserted()`);

    await q.query(`
      CREATE FUNCTION svc_audio_pending_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO audio_pending_count AS c (api_key_id, slot, pending)
          SELECT api_key_id, pg_backend_pid() % 16, -count(*) FROM deleted WHERE status IN ('queued', 'processing') GROUP BY api_key_id ORDER BY api_key_id
          ON CONFLICT (api_key_id, slot) DO UPDATE SET pending = c.pending + excluded.pending;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER audio_pending_deleted AFTER DELETE ON audio_task
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION svc_audio_pending_deleted()`);

    await q.query(`
      CREATE FUNCTION svc_audio_pending_moved() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.status IN ('queued', 'processing') THEN
          INSERT INTO audio_pending_count AS c (api_key_id, slot, pending) VALUES (OLD.api_key_id, pg_backend_pid() % 16, -1)
            ON CONFLICT (api_key_id, slot) DO UPDATE SET pending = c.pending - 1;
        END IF;
        IF NEW.status IN ('queued', 'processing') THEN
          INSERT INTO audio_pending_count AS c (api_key_id, slot, pending) VALUES (NEW.api_key_id, pg_backend_pid() % 16, 1)
            ON CONFLICT (api_key_id, slot) DO UPDATE SET pending = c.pending + 1;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE CONSTRAINT TRIGGER audio_pending_moved AFTER UPDATE ON audio_task DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN ((OLD.status IN ('queued', 'processing')) IS DISTINCT FROM (NEW.status IN ('queued', 'processing'))
              OR (OLD.api_key_id IS DISTINCT FROM NEW.api_key_id AND (OLD.status IN ('queued', 'processing') OR NEW.status IN ('queued', 'processing'))))
        EXECUTE FUNCTION svc_audio_pending_moved()`);

    await q.query(`
      CREATE FUNCTION svc_audio_pending_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM audio_pending_count;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER audio_pending_truncated AFTER TRUNCATE ON audio_task FOR EACH STATEMENT EXECUTE FUNCTION svc_audio_pending_truncated()`);

    await q.query(`
      INSERT INTO audio_pending_count (api_key_id, slot, pending)
        SELECT api_key_id, 0, count(*) FROM audio_task WHERE status IN ('queued', 'processing') GROUP BY api_key_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER audio_pending_truncated ON audio_task');
    await q.query('DROP TRIGGER audio_pending_moved ON audio_task');
    await q.query('DROP TRIGGER audio_pending_deleted ON audio_task');
    await q.query('DROP TRIGGER audio_pending_inserted ON audio_task');
    await q.query('DROP FUNCTION svc_audio_pending_truncated()');
    await q.query('DROP FUNCTION svc_audio_pending_moved()');
    await q.query('DROP FUNCTION svc_audio_pending_deleted()');
    await q.query('DROP FUNCTION svc_audio_pending_inserted()');
    await q.query('DROP TABLE audio_pending_count');
  }
}
