import assert from 'node:assert/strict';
import type { TestDatabase } from './test-database.js';

/**
 * Plays a database crash that lost a pool hold's asynchronous commit (issue 17, decision 2): WAL
 * replay keeps a transaction whole or not at all, so the hold row, its `hold` ledger entry and
 * the wallet's `held` increment (and version step) all go. Only an open hold can be lost: the
 * durable commit of its settlement or release would have flushed the hold's WAL too.
 */
export async function loseHold(db: TestDatabase, holdId: string): Promise<void> {
  const rows = await db.query<{ id: string }>(
    `WITH h AS (DELETE FROM hold WHERE id = $1 AND status = 'open' RETURNING id, workspace_id, environment, amount_micros),
          e AS (DELETE FROM ledger_entry l USING h WHERE l.hold_id = h.id AND l.kind = 'hold' RETURNING 1)
     UPDATE wallet w SET held_micros = w.held_micros - h.amount_micros, version = w.version - 1
     FROM h WHERE w.workspace_id = h.workspace_id AND w.environment = h.environment RETURNING h.id`,
    [holdId],
  );
  assert.equal(rows.length, 1, `open hold ${holdId} lost`);
}
