import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * No foreign keys on the two tables every paid request writes (`hold`, `ledger_entry`).
 *
 * Each text request inserts one hold and three ledger entries; every declared reference on them
 * ran a referential-integrity query per row and locked the referenced row (`FOR KEY SHARE` on the
 * API key and the wallet), which measured 35–40 % of the database time of a request
 * (docs/benchmarks.md › Text › Foreign keys). The references still hold by construction: the
 * only writers are the wallet statements and functions, which copy the workspace and environment
 * from the wallet row they have just locked and the hold id from the hold row they have locked;
 * API keys and workspaces are never deleted (revoked keys stay). The ledger property test checks
 * the invariants after every step.
 */
export class HotPathForeignKeys1763800000400 implements MigrationInterface {
  name = 'HotPathForeignKeys1763800000400';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE ledger_entry DROP CONSTRAINT IF EXISTS ledger_entry_hold_id_fkey');
    await q.query('ALTER TABLE ledger_entry DROP CONSTRAINT IF EXISTS ledger_entry_workspace_id_environment_fkey');
    await q.query('ALTER TABLE hold DROP CONSTRAINT IF EXISTS hold_api_key_id_fkey');
    await q.query('ALTER TABLE hold DROP CONSTRAINT IF EXISTS hold_workspace_id_environment_fkey');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE hold ADD CONSTRAINT hold_workspace_id_environment_fkey FOREIGN KEY (workspace_id, environment) REFERENCES wallet (workspace_id, environment)');
    await q.query('ALTER TABLE hold ADD CONSTRAINT hold_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_key (id)');
    await q.query(
      'ALTER TABLE ledger_entry ADD CONSTRAINT ledger_entry_workspace_id_environment_fkey FOREIGN KEY (workspace_id, environment) REFERENCES wallet (workspace_id, environment)',
    );
    await q.query('ALTER TABLE ledger_entry ADD CONSTRAINT ledger_entry_hold_id_fkey FOREIGN KEY (hold_id) REFERENCES hold (id)');
  }
}
