import type { MigrationInterface, QueryRunner } from 'typeorm';

/** svc_resolve_hold as created by Platform1763800000000: the lines that differ are marked in `up`. */
const BODY = (chargeRule: string, ledgerRows: string) => `
  CREATE OR REPLACE FUNCTION svc_resolve_hold(p_hold uuid, p_measured bigint, p_status text)
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
    ${chargeRule}
    v_capture := LEAST(v_charge, h.amount_micros);
    UPDATE wallet SET balance_micros = balance_micros - v_charge, held_micros = held_micros - h.amount_micros,
           version = version + 1, updated_at = now()
      WHERE workspace_id = h.workspace_id AND environment = h.environment;
    INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
    SELECT h.workspace_id, h.environment, e.kind, e.amount, e.balance_delta, e.held_delta, h.id, h.subject_type, h.subject_id
    FROM (VALUES
      ${ledgerRows}
    ) AS e (kind, amount, balance_delta, held_delta)
    WHERE e.amount > 0;
    UPDATE hold SET status = p_status, captured_micros = v_charge, uncollected_micros = p_measured - v_charge, resolved_at = now()
      WHERE id = p_hold;
    RETURN QUERY SELECT p_status, h.amount_micros, v_charge, p_measured - v_charge, true;
  END $$`;

const CAPTURE_AND_RELEASE = `('capture', v_capture, -v_capture, -v_capture),
      ('release', h.amount_micros - v_capture, 0::bigint, -(h.amount_micros - v_capture))`;

/**
 * A charge never exceeds its hold (DESIGN §6, docs/decisions.md › Charges never exceed the hold).
 *
 * svc_resolve_hold charged the measured cost up to the hold plus whatever the wallet had
 * available, writing the part above the hold as an `adjust` entry: one request whose upstream
 * reported runaway usage could empty a wallet. The charge is now the measured cost capped at
 * the hold; anything above is recorded as uncollected on the hold (the caller logs and counts
 * it), never taken from the rest of the wallet. No `adjust` entry is written any more; the kind
 * stays valid for entries written before.
 *
 * svc_resolve_many needs no change: a batch with a charge above its hold already took the
 * item-by-item path through this function, and every other batch charges at most its holds.
 */
export class ChargeWithinHold1763800000600 implements MigrationInterface {
  name = 'ChargeWithinHold1763800000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(BODY('v_charge := LEAST(p_measured, h.amount_micros);', CAPTURE_AND_RELEASE));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      BODY(
        'v_charge := LEAST(p_measured, h.amount_micros + GREATEST(w.balance_micros - w.held_micros, 0));',
        `${CAPTURE_AND_RELEASE},
      ('adjust', v_charge - v_capture, -(v_charge - v_capture), 0::bigint)`,
      ),
    );
  }
}
