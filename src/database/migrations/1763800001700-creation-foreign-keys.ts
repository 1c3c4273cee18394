import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The references a task creation's rows declared: table, constraint, and its definition for `down`. */
const DROPPED: ReadonlyArray<readonly [table: string, constraint: string, definition: string]> = [
  ['video_task', 'video_task_api_key_id_fkey', 'FOREIGN KEY (api_key_id) REFERENCES api_key (id)'],
  ['video_task', 'video_task_workspace_id_fkey', 'FOREIGN KEY (workspace_id) REFERENCES workspace (id)'],
  ['audio_task', 'audio_task_api_key_id_fkey', 'FOREIGN KEY (api_key_id) REFERENCES api_key (id)'],
  ['audio_task', 'audio_task_workspace_id_fkey', 'FOREIGN KEY (workspace_id) REFERENCES workspace (id)'],
  ['audio_idempotency', 'audio_idempotency_api_key_id_fkey', 'FOREIGN KEY (api_key_id) REFERENCES api_key (id)'],
  ['audio_idempotency', 'audio_idempotency_task_id_fkey', 'FOREIGN KEY (task_id) REFERENCES audio_task (id)'],
  ['image_generation', 'image_generation_api_key_id_fkey', 'FOREIGN KEY (api_key_id) REFERENCES api_key (id)'],
  ['image_generation', 'image_generation_workspace_id_fkey', 'FOREIGN KEY (workspace_id) REFERENCES workspace (id)'],
  ['alternate_task', 'alternate_task_api_key_id_fkey', 'FOREIGN KEY (api_key_id) REFERENCES api_key (id)'],
  ['alternate_task', 'alternate_task_workspace_id_fkey', 'FOREIGN KEY (workspace_id) REFERENCES workspace (id)'],
];

/**
 * No foreign keys on the rows a task creation writes (issue 17), as on `hold` and `ledger_entry`
 * (migration 1763800000400): each reference ran a referential-integrity query per inserted row
 * and locked the referenced row, four per audio creation with an Idempotency-Key. Measured at 32
 * clients, PostgreSQL's CPU per audio creation fell from 149–155 µs to 126–128 µs without them,
 * per video creation from 100–106 µs to 94–96 µs (docs/benchmarks.md › Group commit for task
 * creations › Durable batch holds, no foreign keys on creation rows).
 *
 * The references hold by construction: a task row's key and workspace are those of the API key
 * that authenticated its creation, and workspaces and API keys are never deleted (a revoked key
 * stays); an idempotency record is written in the transaction that inserts the task it names,
 * and the service never deletes a task row (retention deletes its media). docs/decisions.md › No
 * foreign keys on `hold` and `ledger_entry`.
 */
export class CreationForeignKeys1763800001700 implements MigrationInterface {
  name = 'CreationForeignKeys1763800001700';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, constraint] of DROPPED) await q.query(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${constraint}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, constraint, definition] of DROPPED) await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${constraint} ${definition}`);
  }
}
