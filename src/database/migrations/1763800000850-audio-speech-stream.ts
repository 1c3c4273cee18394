import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Streaming speech (docs/audio.md › Streaming speech): the API process runs the upstream stream
 * itself under a lease it keeps extending; a task found `streaming` past its lease lost its
 * process and is reconciled by a worker.
 */
export class AudioSpeechStream1763800000850 implements MigrationInterface {
  name = 'AudioSpeechStream1763800000850';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audio_task DROP CONSTRAINT audio_task_phase_check`);
    await q.query(`ALTER TABLE audio_task ADD CONSTRAINT audio_task_phase_check CHECK (phase IN ('synthesizing', 'streaming', 'reconciliationRequired', 'storing', 'failing'))`);
    await q.query(`ALTER TABLE audio_task ADD COLUMN lease_expires_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audio_task DROP COLUMN lease_expires_at`);
    await q.query(`UPDATE audio_task SET phase = 'reconciliationRequired' WHERE phase = 'streaming'`);
    await q.query(`ALTER TABLE audio_task DROP CONSTRAINT audio_task_phase_check`);
    await q.query(`ALTER TABLE audio_task ADD CONSTRAINT audio_task_phase_check CHECK (phase IN ('synthesizing', 'reconciliationRequired', 'storing', 'failing'))`);
  }
}
