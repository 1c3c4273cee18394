import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Holds made on the pool commit asynchronously (issue 17, decision 2; docs/decisions.md ›
 * Asynchronous commit for pool holds): a database crash can lose a hold whose request has not
 * settled yet — the hold row, its `hold` entry and the wallet's `held` increment together, as
 * one transaction. The request then settles or releases a hold the database never kept.
 *
 * svc_charge_lost_hold resolves such a hold from what the caller still knows of it (the hold's
 * input). It writes the hold row back, already resolved, so the outcome is recorded once: a
 * second settlement or release of the same id finds it resolved and changes nothing. A
 * settlement charges the measured cost capped at the hold's amount (as every charge is) and at
 * the wallet's available balance (the lost hold no longer reserves anything), written as one
 * `adjust` entry (balance −amount, held unchanged: nothing was held). A release charges nothing
 * and writes no entry. Returns what svc_resolve_hold returns; no row when the wallet does not
 * exist.
 *
 * Lock order as everywhere in the wallet: the hold row first (a hold that exists after all is
 * svc_resolve_hold's), then the wallet row. Two resolutions of the same lost hold queue on the
 * wallet row; the second finds the row the first inserted (ON CONFLICT) and gets the first's outcome.
 */
export class LostHolds1763800001400 implements MigrationInterface {
  name = 'LostHolds1763800001400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION svc_charge_lost_hold(p_hold uuid, p_workspace uuid, p_environment text, p_api_key uuid, p_amount bigint,
                                           p_subject_type text, p_subject_id text, p_measured bigint, p_status text)
      RETURNS TABLE (status text, amount_micros bigint, captured_micros bigint, uncollected_micros bigint, changed boolean)
      LANGUAGE plpgsql AS $$
      DECLARE
        w wallet%ROWTYPE;
        v_charge bigint;
        v_inserted integer;
      BEGIN
        IF p_status NOT IN ('settled', 'released') OR p_measured < 0 OR p_amount <= 0 THEN
          RAISE EXCEPTION 'svc_charge_lost_hold: invalid resolution' USING ERRCODE = '22023';
        END IF;
        PERFORM 1 FROM hold h WHERE h.id = p_hold FOR UPDATE;
        IF FOUND THEN
          RETURN QUERY SELECT * FROM svc_resolve_hold(p_hold, p_measured, p_status);
          RETURN;
        END IF;
        SELECT * INTO w FROM wallet wl WHERE wl.workspace_id = p_workspace AND wl.environment = p_environment FOR UPDATE;
        IF NOT FOUND THEN RETURN; END IF;

        v_charge := CASE WHEN p_status = 'settled'
                         THEN LEAST(p_measured, p_amount, GREATEST(w.balance_micros - w.held_micros, 0))
                         ELSE 0 END;
        INSERT INTO hold (id, workspace_id, environment, api_key_id, amount_micros, captured_micros, uncollected_micros,
                          status, subject_type, subject_id, resolved_at)
        VALUES (p_hold, p_workspace, p_environment, p_api_key, p_amount, v_charge, p_measured - v_charge,
                p_status, p_subject_type, p_subject_id, now())
        ON CONFLICT (id) DO NOTHING;
        GET DIAGNOSTICS v_inserted = ROW_COUNT;
        IF v_inserted = 0 THEN
          -- A twin resolution wrote it while this one waited for the wallet: its outcome stands.
          RETURN QUERY SELECT * FROM svc_resolve_hold(p_hold, p_measured, p_status);
          RETURN;
        END IF;
        IF v_charge > 0 THEN
          UPDATE wallet wl SET balance_micros = wl.balance_micros - v_charge, version = wl.version + 1, updated_at = now()
            WHERE wl.workspace_id = p_workspace AND wl.environment = p_environment;
          INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
          VALUES (p_workspace, p_environment, 'adjust', v_charge, -v_charge, 0, p_hold, p_subject_type, p_subject_id);
        END IF;
        RETURN QUERY SELECT p_status, p_amount, v_charge, p_measured - v_charge, true;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION svc_charge_lost_hold(uuid, uuid, text, uuid, bigint, text, text, bigint, text)');
  }
}
