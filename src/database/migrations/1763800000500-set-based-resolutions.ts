import type { MigrationInterface, QueryRunner } from 'typeorm';

/** svc_resolve_many as created by WalletBatch1763800000200: svc_resolve_hold item by item. */
const ITEM_BY_ITEM = `
  FOR i IN 1..n LOOP
    SELECT * INTO r FROM svc_resolve_hold(p_holds[i], p_measured[i], p_statuses[i]);
    IF FOUND THEN
      RETURN QUERY SELECT i, true, r.status, r.amount_micros, r.captured_micros, r.uncollected_micros, r.changed;
    ELSE
      RETURN QUERY SELECT i, false, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint, false;
    END IF;
  END LOOP;`;

const HEAD = `
  CREATE OR REPLACE FUNCTION svc_resolve_many(p_holds uuid[], p_measured bigint[], p_statuses text[])
  RETURNS TABLE (idx integer, known boolean, status text, amount_micros bigint, captured_micros bigint, uncollected_micros bigint, changed boolean)
  LANGUAGE plpgsql AS $$
  DECLARE
    n integer := coalesce(cardinality(p_holds), 0);
    r record;
  BEGIN
    IF coalesce(cardinality(p_measured), 0) <> n OR coalesce(cardinality(p_statuses), 0) <> n THEN
      RAISE EXCEPTION 'svc_resolve_many: arrays of different lengths' USING ERRCODE = '22023';
    END IF;
    IF n = 0 THEN RETURN; END IF;
    PERFORM 1 FROM hold h WHERE h.id = ANY (p_holds) ORDER BY h.id FOR UPDATE OF h;
    -- Only the wallets of holds still open are touched (the hold rows are locked: stable). The
    -- holds are read by primary key first (OFFSET 0 keeps the subquery apart): left to itself the
    -- planner may scan the partial index of every open hold instead.
    PERFORM 1 FROM wallet wl
      WHERE (wl.workspace_id, wl.environment) IN (
        SELECT b.workspace_id, b.environment FROM (SELECT h.workspace_id, h.environment, h.status FROM hold h WHERE h.id = ANY (p_holds) OFFSET 0) AS b
        WHERE b.status = 'open')
      ORDER BY wl.workspace_id, wl.environment
      FOR UPDATE OF wl;`;

/**
 * Settlements and releases in sets (docs/benchmarks.md › Text › Optimisation 6).
 *
 * svc_resolve_many applied svc_resolve_hold to each item: per item a function call, two row
 * locks, a wallet update (a new version of the same wallet row for every item), ledger inserts
 * and a hold update; measured at a quarter of a millisecond of PostgreSQL CPU per settlement.
 *
 * The common batch is now done in four set statements: one wallet update per wallet, one ledger
 * insert, one hold update, one answer. It is exact only when no item's outcome depends on the
 * items before it, so it is taken when every item charges at most its hold (the charge is then
 * the measured amount whatever the wallet holds: no capping, no `adjust`), statuses are
 * 'settled' / 'released', amounts are not negative, and no hold id appears twice. Any other
 * batch (a charge above its hold, a repeated id, anything unusual) takes the item-by-item loop,
 * which remains the reference: svc_resolve_hold itself, in arrival order.
 */
export class SetBasedResolutions1763800000500 implements MigrationInterface {
  name = 'SetBasedResolutions1763800000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`${HEAD}
    IF (SELECT count(DISTINCT x) FROM unnest(p_holds) AS x) <> n
       OR EXISTS (SELECT 1 FROM unnest(p_measured, p_statuses) AS v (m, st) WHERE m IS NULL OR m < 0 OR st IS NULL OR st NOT IN ('settled', 'released'))
       OR EXISTS (
         WITH batch AS MATERIALIZED (SELECT h.status, h.amount_micros, v.m FROM unnest(p_holds, p_measured) AS v (id, m) JOIN hold h ON h.id = v.id)
         SELECT 1 FROM batch b WHERE b.status = 'open' AND b.m > b.amount_micros) THEN
      ${ITEM_BY_ITEM}
      RETURN;
    END IF;

    -- Every item independent: the charge of an open hold is its measured amount (at most the
    -- hold), the rest of the hold is released; a resolved hold or an unknown id changes nothing.
    RETURN QUERY
    WITH req AS (
      SELECT v.id, v.m, v.st, v.ord::integer AS ord FROM unnest(p_holds, p_measured, p_statuses) WITH ORDINALITY AS v (id, m, st, ord)
    ), cur AS (
      SELECT req.*, h.id IS NOT NULL AS known, h.status AS was, h.amount_micros AS amount, h.captured_micros AS captured,
             h.uncollected_micros AS uncollected, h.workspace_id, h.environment, h.subject_type, h.subject_id
      FROM req LEFT JOIN hold h ON h.id = req.id
    ), todo AS (
      SELECT * FROM cur WHERE cur.known AND cur.was = 'open'
    ), wallets AS (
      UPDATE wallet wl SET balance_micros = wl.balance_micros - t.charged, held_micros = wl.held_micros - t.held,
             version = wl.version + t.items, updated_at = now()
      FROM (SELECT workspace_id, environment, sum(m) AS charged, sum(amount) AS held, count(*) AS items FROM todo GROUP BY workspace_id, environment) AS t
      WHERE wl.workspace_id = t.workspace_id AND wl.environment = t.environment
      RETURNING 1
    ), entries AS (
      INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
      SELECT t.workspace_id, t.environment, e.kind, e.amount, e.balance_delta, e.held_delta, t.id, t.subject_type, t.subject_id
      FROM todo t
      CROSS JOIN LATERAL (VALUES
        (1, 'capture', t.m, -t.m, -t.m),
        (2, 'release', t.amount - t.m, 0::bigint, -(t.amount - t.m))
      ) AS e (k, kind, amount, balance_delta, held_delta)
      WHERE e.amount > 0
      ORDER BY t.ord, e.k
      RETURNING 1
    ), resolved AS (
      UPDATE hold h SET status = t.st, captured_micros = t.m, uncollected_micros = 0, resolved_at = now()
      FROM todo t WHERE h.id = t.id
      RETURNING 1
    )
    SELECT c.ord, c.known,
           CASE WHEN NOT c.known THEN NULL WHEN c.was = 'open' THEN c.st ELSE c.was END,
           c.amount,
           CASE WHEN c.was = 'open' THEN c.m ELSE c.captured END,
           CASE WHEN c.was = 'open' THEN 0::bigint ELSE c.uncollected END,
           coalesce(c.was = 'open', false)
    FROM cur c ORDER BY c.ord;
  END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`${HEAD}
    ${ITEM_BY_ITEM}
  END $$`);
  }
}
