import type { MigrationInterface, QueryRunner } from 'typeorm';
import { SVC_HOLD_MANY_FIRST } from './1763800000200-wallet-batch.js';
import { SetBasedResolutions1763800000500 } from './1763800000500-set-based-resolutions.js';

/** svc_hold_many's wallet lock as WalletBatch1763800000200 wrote it: a semi-join the planner may hash over a scan of `wallet`. */
const WALLET_LOCK_BY_SEMI_JOIN = `
          SELECT wl.workspace_id, wl.environment, wl.balance_micros - wl.held_micros AS available
          FROM wallet wl
          WHERE (wl.workspace_id, wl.environment) IN (SELECT r.ws, r.env FROM unnest(p_workspaces, p_environments) AS r (ws, env))
          ORDER BY wl.workspace_id, wl.environment
          FOR NO KEY UPDATE OF wl`;

/** The same lock, one primary-key lookup per distinct wallet key, taken in key order. */
const WALLET_LOCK_BY_KEY = `
          SELECT wl.workspace_id, wl.environment, wl.available
          FROM (SELECT DISTINCT r.ws, r.env FROM unnest(p_workspaces, p_environments) AS r (ws, env) ORDER BY r.ws, r.env) AS k
          CROSS JOIN LATERAL (
            SELECT w1.workspace_id, w1.environment, w1.balance_micros - w1.held_micros AS available
            FROM wallet w1 WHERE w1.workspace_id = k.ws AND w1.environment = k.env
            FOR NO KEY UPDATE OF w1) AS wl
          ORDER BY wl.workspace_id, wl.environment`;

const HOLD_MANY = SVC_HOLD_MANY_FIRST.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION').replace(WALLET_LOCK_BY_SEMI_JOIN, WALLET_LOCK_BY_KEY);

/**
 * The set statements of svc_resolve_many with every read of `hold` (and `wallet`) written as one
 * primary-key lookup per id: `CROSS JOIN LATERAL (… WHERE h.id = x.id OFFSET 0)` cannot be
 * flattened into a join, so the plan is a nested loop over the batch's ids whatever PostgreSQL
 * believes of the table's size. Otherwise as SetBasedResolutions1763800000500.
 */
const RESOLVE_MANY = `
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
    -- Lock order: the hold rows by id, then the wallets of the holds still open by key.
    PERFORM 1
      FROM (SELECT DISTINCT x.id FROM unnest(p_holds) AS x (id) ORDER BY x.id) AS k
      CROSS JOIN LATERAL (SELECT 1 FROM hold h WHERE h.id = k.id FOR UPDATE OF h) AS l;
    PERFORM 1
      FROM (SELECT DISTINCT b.workspace_id, b.environment
            FROM unnest(p_holds) AS x (id)
            CROSS JOIN LATERAL (SELECT h.workspace_id, h.environment, h.status FROM hold h WHERE h.id = x.id OFFSET 0) AS b
            WHERE b.status = 'open'
            ORDER BY b.workspace_id, b.environment) AS k
      CROSS JOIN LATERAL (SELECT 1 FROM wallet wl WHERE wl.workspace_id = k.workspace_id AND wl.environment = k.environment FOR UPDATE OF wl) AS l;

    IF (SELECT count(DISTINCT x) FROM unnest(p_holds) AS x) <> n
       OR EXISTS (SELECT 1 FROM unnest(p_measured, p_statuses) AS v (m, st) WHERE m IS NULL OR m < 0 OR st IS NULL OR st NOT IN ('settled', 'released'))
       OR EXISTS (
         WITH batch AS MATERIALIZED (
           SELECT h.status, h.amount_micros, v.m FROM unnest(p_holds, p_measured) AS v (id, m)
           CROSS JOIN LATERAL (SELECT h.status, h.amount_micros FROM hold h WHERE h.id = v.id OFFSET 0) AS h)
         SELECT 1 FROM batch b WHERE b.status = 'open' AND b.m > b.amount_micros) THEN
      FOR i IN 1..n LOOP
        SELECT * INTO r FROM svc_resolve_hold(p_holds[i], p_measured[i], p_statuses[i]);
        IF FOUND THEN
          RETURN QUERY SELECT i, true, r.status, r.amount_micros, r.captured_micros, r.uncollected_micros, r.changed;
        ELSE
          RETURN QUERY SELECT i, false, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint, false;
        END IF;
      END LOOP;
      RETURN;
    END IF;

    -- Every item independent: the charge of an open hold is its measured amount (at most the
    -- hold), the rest of the hold is released; a resolved hold or an unknown id changes nothing.
    -- The hold update names its rows by ctid (read under the lock above): a TID scan, no join.
    RETURN QUERY
    WITH req AS (
      SELECT v.id, v.m, v.st, v.ord::integer AS ord FROM unnest(p_holds, p_measured, p_statuses) WITH ORDINALITY AS v (id, m, st, ord)
    ), cur AS (
      SELECT req.*, h.id IS NOT NULL AS known, h.status AS was, h.amount_micros AS amount, h.captured_micros AS captured,
             h.uncollected_micros AS uncollected, h.workspace_id, h.environment, h.subject_type, h.subject_id, h.row_ctid
      FROM req LEFT JOIN LATERAL (
        SELECT h.id, h.status, h.amount_micros, h.captured_micros, h.uncollected_micros, h.workspace_id, h.environment,
               h.subject_type, h.subject_id, h.ctid AS row_ctid
        FROM hold h WHERE h.id = req.id OFFSET 0) AS h ON true
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
      FROM todo t WHERE h.ctid = t.row_ctid
      RETURNING 1
    )
    SELECT c.ord, c.known,
           CASE WHEN NOT c.known THEN NULL WHEN c.was = 'open' THEN c.st ELSE c.was END,
           c.amount,
           CASE WHEN c.was = 'open' THEN c.m ELSE c.captured END,
           CASE WHEN c.was = 'open' THEN 0::bigint ELSE c.uncollected END,
           coalesce(c.was = 'open', false)
    FROM cur c ORDER BY c.ord;
  END $$`;

/**
 * The wallet's set statements, planner-proof (docs/benchmarks.md › Issue 17 figures, the prewarm;
 * docs/decisions.md › Planner-proof wallet statements).
 *
 * PL/pgSQL keeps a generic plan per statement and session once five calls have run. On a new
 * database those calls come while `hold` is nearly empty and not yet analyzed, so the plans kept
 * were hash joins over a sequential scan of `hold` (and of `wallet` for svc_hold_many's lock),
 * used until the first autoanalyze invalidates them while the table grows by thousands of rows
 * a second: 5,640 sequential scans reading 56 million rows in 15 s of a first load. Every read of
 * `hold` and `wallet` in svc_resolve_many and svc_hold_many is now a lookup by primary key per
 * id inside a LATERAL subquery that cannot be flattened (OFFSET 0, or a row lock), and the hold
 * update addresses its rows by ctid. Results, locks and lock order are unchanged.
 */
export class PlannerProofWallet1763800001500 implements MigrationInterface {
  name = 'PlannerProofWallet1763800001500';

  async up(q: QueryRunner): Promise<void> {
    if (HOLD_MANY === SVC_HOLD_MANY_FIRST.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION')) {
      throw new Error('PlannerProofWallet1763800001500: the wallet lock of svc_hold_many was not found');
    }
    await q.query(HOLD_MANY);
    await q.query(RESOLVE_MANY);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION svc_hold_many(uuid[], uuid[], text[], uuid[], bigint[], text[], text[])');
    await q.query(SVC_HOLD_MANY_FIRST);
    await new SetBasedResolutions1763800000500().up(q);
  }
}
