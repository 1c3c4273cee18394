import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Identity, wallet and ledger, media objects: the platform's tables. */
export class Platform1763800000000 implements MigrationInterface {
  name = 'Platform1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspace (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX workspace_created ON workspace (created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE api_key (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        name text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        prefix text NOT NULL,
        secret_sha256 bytea NOT NULL UNIQUE,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_key_workspace ON api_key (workspace_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE wallet (
        workspace_id uuid NOT NULL REFERENCES workspace (id),
        environment text NOT NULL CHECK (environment IN ('live', 'test')),
        balance_micros bigint NOT NULL DEFAULT 0,
        held_micros bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
        version bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, environment),
        -- The invariant every wallet operation keeps (available = balance − held ≥ 0), also held
        -- by the database, so no future code path can overspend without an error.
        CONSTRAINT wallet_available_not_negative CHECK (balance_micros >= held_micros)
      )`);

    await q.query(`
      CREATE TABLE hold (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL,
        environment text NOT NULL,
        api_key_id uuid REFERENCES api_key (id),
        amount_micros bigint NOT NULL CHECK (amount_micros > 0),
        captured_micros bigint NOT NULL DEFAULT 0 CHECK (captured_micros >= 0),
        uncollected_micros bigint NOT NULL DEFAULT 0 CHECK (uncollected_micros >= 0),
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'settled', 'released')),
        subject_type text NOT NULL,
        subject_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        FOREIGN KEY (workspace_id, environment) REFERENCES wallet (workspace_id, environment)
      )`);
    await q.query(`CREATE INDEX hold_open ON hold (workspace_id, environment) WHERE status = 'open'`);
    await q.query(`CREATE INDEX hold_subject ON hold (subject_type, subject_id)`);

    await q.query(`
      CREATE TABLE ledger_entry (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        workspace_id uuid NOT NULL,
        environment text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('credit', 'hold', 'capture', 'release', 'adjust')),
        amount_micros bigint NOT NULL CHECK (amount_micros >= 0),
        balance_delta_micros bigint NOT NULL,
        held_delta_micros bigint NOT NULL,
        hold_id uuid REFERENCES hold (id),
        subject_type text,
        subject_id text,
        reference text,
        created_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (workspace_id, environment) REFERENCES wallet (workspace_id, environment)
      )`);
    await q.query(`CREATE INDEX ledger_wallet ON ledger_entry (workspace_id, environment, id DESC)`);
    await q.query(`CREATE INDEX ledger_workspace ON ledger_entry (workspace_id, id DESC)`);
    // A credit reference is applied once per wallet; a hold gets each kind of entry at most once.
    await q.query(`CREATE UNIQUE INDEX ledger_credit_reference ON ledger_entry (workspace_id, environment, reference) WHERE kind = 'credit'`);
    await q.query(`CREATE UNIQUE INDEX ledger_hold_kind ON ledger_entry (hold_id, kind) WHERE hold_id IS NOT NULL`);

    // Wallet operations that must be atomic and one round trip each (DESIGN §5).
    // Credit: idempotent by reference; the wallet row is created on first use.
    await q.query(`
      CREATE FUNCTION svc_credit(p_workspace uuid, p_environment text, p_amount bigint, p_reference text)
      RETURNS TABLE (applied boolean, recorded_amount bigint)
      LANGUAGE plpgsql AS $$
      DECLARE v_entry bigint;
      BEGIN
        INSERT INTO wallet (workspace_id, environment) VALUES (p_workspace, p_environment) ON CONFLICT DO NOTHING;
        INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, reference)
        VALUES (p_workspace, p_environment, 'credit', p_amount, p_amount, 0, p_reference)
        ON CONFLICT (workspace_id, environment, reference) WHERE kind = 'credit' DO NOTHING
        RETURNING id INTO v_entry;
        IF v_entry IS NULL THEN
          RETURN QUERY SELECT false, e.amount_micros FROM ledger_entry e
            WHERE e.workspace_id = p_workspace AND e.environment = p_environment AND e.kind = 'credit' AND e.reference = p_reference;
          RETURN;
        END IF;
        UPDATE wallet SET balance_micros = balance_micros + p_amount, version = version + 1, updated_at = now()
          WHERE workspace_id = p_workspace AND environment = p_environment;
        RETURN QUERY SELECT true, p_amount;
      END $$`);

    // Settle (p_status 'settled') or release (p_measured 0, p_status 'released') an open hold.
    // The charge is the measured cost, capped at the hold plus what the wallet has available,
    // so a wallet never goes negative; any remainder is recorded as uncollected on the hold.
    // A hold already resolved is returned unchanged: resolving twice is a no-op.
    await q.query(`
      CREATE FUNCTION svc_resolve_hold(p_hold uuid, p_measured bigint, p_status text)
      RETURNS TABLE (status text, amount_micros bigint, captured_micros bigint, uncollected_micros bigint, changed boolean)
      LANGUAGE plpgsql AS $$
      DECLARE
        h hold%ROWTYPE;
        w wallet%ROWTYPE;
        v_charge bigint;
        v_capture bigint;
      BEGIN
        SELECT * INTO h FROM hold WHERE id = p_hold FOR UPDATE;
        IF NOT FOUND THEN RETURN; END IF;
        IF h.status <> 'open' THEN
          RETURN QUERY SELECT h.status, h.amount_micros, h.captured_micros, h.uncollected_micros, false;
          RETURN;
        END IF;
        SELECT * INTO w FROM wallet WHERE workspace_id = h.workspace_id AND environment = h.environment FOR UPDATE;
        v_charge := LEAST(p_measured, h.amount_micros + GREATEST(w.balance_micros - w.held_micros, 0));
        v_capture := LEAST(v_charge, h.amount_micros);
        UPDATE wallet SET balance_micros = balance_micros - v_charge, held_micros = held_micros - h.amount_micros,
               version = version + 1, updated_at = now()
          WHERE workspace_id = h.workspace_id AND environment = h.environment;
        INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
        SELECT h.workspace_id, h.environment, e.kind, e.amount, e.balance_delta, e.held_delta, h.id, h.subject_type, h.subject_id
        FROM (VALUES
          ('capture', v_capture, -v_capture, -v_capture),
          ('release', h.amount_micros - v_capture, 0::bigint, -(h.amount_micros - v_capture)),
          ('adjust', v_charge - v_capture, -(v_charge - v_capture), 0::bigint)
        ) AS e (kind, amount, balance_delta, held_delta)
        WHERE e.amount > 0;
        UPDATE hold SET status = p_status, captured_micros = v_charge, uncollected_micros = p_measured - v_charge, resolved_at = now()
          WHERE id = p_hold;
        RETURN QUERY SELECT p_status, h.amount_micros, v_charge, p_measured - v_charge, true;
      END $$`);

    await q.query(`
      CREATE TABLE media_object (
        key text PRIMARY KEY,
        workspace_id uuid,
        content_type text NOT NULL,
        bytes bigint NOT NULL,
        public_token text UNIQUE,
        expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX media_object_expiring ON media_object (expires_at) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION IF EXISTS svc_resolve_hold(uuid, bigint, text)');
    await q.query('DROP FUNCTION IF EXISTS svc_credit(uuid, text, bigint, text)');
    for (const table of ['media_object', 'ledger_entry', 'hold', 'wallet', 'api_key', 'workspace']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
