import type { MigrationInterface, QueryRunner } from 'typeorm';

/** svc_hold_many as this migration creates it (PlannerProofWallet1763800001500 replaces it; its down restores it). */
export const SVC_HOLD_MANY_FIRST = `
      CREATE FUNCTION svc_hold_many(p_ids uuid[], p_workspaces uuid[], p_environments text[], p_api_keys uuid[],
                                    p_amounts bigint[], p_subject_types text[], p_subject_ids text[])
      RETURNS TABLE (idx integer, hold_id uuid)
      LANGUAGE plpgsql AS $$
      DECLARE
        n integer := coalesce(cardinality(p_ids), 0);
        w record;
        w_ws uuid[] := '{}';
        w_env text[] := '{}';
        w_available bigint[] := '{}';
        w_added bigint[] := '{}';
        w_count bigint[] := '{}';
        accepted boolean[];
        k integer;
      BEGIN
        IF coalesce(cardinality(p_workspaces), 0) <> n OR coalesce(cardinality(p_environments), 0) <> n
           OR coalesce(cardinality(p_api_keys), 0) <> n OR coalesce(cardinality(p_amounts), 0) <> n
           OR coalesce(cardinality(p_subject_types), 0) <> n OR coalesce(cardinality(p_subject_ids), 0) <> n THEN
          RAISE EXCEPTION 'svc_hold_many: arrays of different lengths' USING ERRCODE = '22023';
        END IF;
        IF n = 0 THEN RETURN; END IF;
        accepted := array_fill(false, ARRAY[n]);

        -- Lock every wallet concerned, in key order (the same order in every transaction).
        FOR w IN
          SELECT wl.workspace_id, wl.environment, wl.balance_micros - wl.held_micros AS available
          FROM wallet wl
          WHERE (wl.workspace_id, wl.environment) IN (SELECT r.ws, r.env FROM unnest(p_workspaces, p_environments) AS r (ws, env))
          ORDER BY wl.workspace_id, wl.environment
          FOR NO KEY UPDATE OF wl
        LOOP
          w_ws := w_ws || w.workspace_id;
          w_env := w_env || w.environment;
          w_available := w_available || w.available;
          w_added := w_added || 0::bigint;
          w_count := w_count || 0::bigint;
        END LOOP;

        -- Arrival order: a hold is accepted only if what is still available covers it.
        FOR i IN 1..n LOOP
          k := NULL;
          FOR j IN 1..coalesce(cardinality(w_ws), 0) LOOP
            IF w_ws[j] = p_workspaces[i] AND w_env[j] = p_environments[i] THEN k := j; EXIT; END IF;
          END LOOP;
          IF k IS NOT NULL AND w_available[k] >= p_amounts[i] THEN
            w_available[k] := w_available[k] - p_amounts[i];
            w_added[k] := w_added[k] + p_amounts[i];
            w_count[k] := w_count[k] + 1;
            accepted[i] := true;
          END IF;
        END LOOP;

        -- One update per wallet (version counts the holds, as one statement per hold would).
        UPDATE wallet wl SET held_micros = wl.held_micros + r.added, version = wl.version + r.holds, updated_at = now()
          FROM unnest(w_ws, w_env, w_added, w_count) AS r (ws, env, added, holds)
          WHERE wl.workspace_id = r.ws AND wl.environment = r.env AND r.holds > 0;

        INSERT INTO hold (id, workspace_id, environment, api_key_id, amount_micros, subject_type, subject_id)
          SELECT r.id, r.ws, r.env, r.api_key, r.amount, r.subject_type, r.subject_id
          FROM unnest(p_ids, p_workspaces, p_environments, p_api_keys, p_amounts, p_subject_types, p_subject_ids)
            WITH ORDINALITY AS r (id, ws, env, api_key, amount, subject_type, subject_id, ord)
          WHERE accepted[r.ord]
          ORDER BY r.ord;

        INSERT INTO ledger_entry (workspace_id, environment, kind, amount_micros, balance_delta_micros, held_delta_micros, hold_id, subject_type, subject_id)
          SELECT r.ws, r.env, 'hold', r.amount, 0, r.amount, r.id, r.subject_type, r.subject_id
          FROM unnest(p_ids, p_workspaces, p_environments, p_amounts, p_subject_types, p_subject_ids)
            WITH ORDINALITY AS r (id, ws, env, amount, subject_type, subject_id, ord)
          WHERE accepted[r.ord]
          ORDER BY r.ord;

        RETURN QUERY
          SELECT r.ord::integer, CASE WHEN accepted[r.ord] THEN r.id END
          FROM unnest(p_ids) WITH ORDINALITY AS r (id, ord)
          ORDER BY r.ord;
      END $$`;

/**
 * Group commit for the wallet (docs/benchmarks.md › Text › Group commit): one call, one
 * transaction and one commit for many holds or many resolutions queued in the app while the
 * previous call was in flight.
 *
 * Lock order, shared with `svc_resolve_hold` so that no two wallet transactions can deadlock:
 * hold rows first (by id), then wallet rows (by workspace, environment).
 */
export class WalletBatch1763800000200 implements MigrationInterface {
  name = 'WalletBatch1763800000200';

  async up(q: QueryRunner): Promise<void> {
    // Many holds at once, taken in arrival order (array order): each is accepted only when its
    // wallet's available balance — after the holds accepted before it in the same call — covers
    // it, exactly as the one-hold statement would have done had they come one after the other.
    // A wallet that does not exist refuses. Each wallet row is updated once; one hold row and one
    // `hold` ledger entry per accepted hold. Returns one row per request (`idx` is 1-based), with
    // the hold id, or NULL when refused.
    await q.query(SVC_HOLD_MANY_FIRST);

    // Many settlements / releases at once, in arrival order, each applied by svc_resolve_hold
    // itself (one source of truth: capping, adjust entry, uncollected, idempotence). Locks are
    // taken first in the shared order. One row per request (1-based `idx`); `known` is false
    // for an unknown hold id, which changes nothing and does not affect the other requests.
    await q.query(`
      CREATE FUNCTION svc_resolve_many(p_holds uuid[], p_measured bigint[], p_statuses text[])
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
        -- Only the wallets of holds still open are touched (the hold rows are locked: stable).
        PERFORM 1 FROM wallet wl
          WHERE (wl.workspace_id, wl.environment) IN (SELECT h.workspace_id, h.environment FROM hold h WHERE h.id = ANY (p_holds) AND h.status = 'open')
          ORDER BY wl.workspace_id, wl.environment
          FOR UPDATE OF wl;
        FOR i IN 1..n LOOP
          SELECT * INTO r FROM svc_resolve_hold(p_holds[i], p_measured[i], p_statuses[i]);
          IF FOUND THEN
            RETURN QUERY SELECT i, true, r.status, r.amount_micros, r.captured_micros, r.uncollected_micros, r.changed;
          ELSE
            RETURN QUERY SELECT i, false, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint, false;
          END IF;
        END LOOP;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION IF EXISTS svc_resolve_many(uuid[], bigint[], text[])');
    await q.query('DROP FUNCTION IF EXISTS svc_hold_many(uuid[], uuid[], text[], uuid[], bigint[], text[], text[])');
  }
}
