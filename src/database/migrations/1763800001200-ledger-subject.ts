import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The admin ledger filter by subject and the admin task detail (a task's hold and its entries)
 * read a workspace's entries of one subject: without this index that is a scan of the
 * workspace's whole ledger.
 */
export class LedgerSubject1763800001200 implements MigrationInterface {
  name = 'LedgerSubject1763800001200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ledger_entry_subject ON ledger_entry (workspace_id, subject_id, id DESC) WHERE subject_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ledger_entry_subject`);
  }
}
