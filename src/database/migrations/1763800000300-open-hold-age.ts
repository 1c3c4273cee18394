import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Open holds by age: the sweep that releases text holds left open by a process that died
 * mid-request reads only this small index (open holds are few; settled ones are most rows).
 */
export class OpenHoldAge1763800000300 implements MigrationInterface {
  name = 'OpenHoldAge1763800000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX hold_open_created ON hold (created_at) WHERE status = 'open'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS hold_open_created');
  }
}
