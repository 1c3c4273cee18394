import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource, QueryFailedError } from 'typeorm';
import { newId } from '../../libs/common/index.js';
import { insertRows } from '../../src/database/bulk-insert.js';
import { newPaidTaskColumns } from '../../src/database/paid-task-columns.js';
import { inTransaction } from '../../src/database/transaction.js';
import { AudioIdempotencyEntity, AudioTaskEntity } from '../../src/modules/audio/audio-task.entity.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/**
 * insertRows (src/database/bulk-insert.ts), the unnest insert that task creations use instead of
 * TypeORM's query builder: what it stores must be exactly what `EntityManager.insert` stores.
 */
describe('insertRows: the same rows as TypeORM insert (real PostgreSQL)', () => {
  let t: TestApp;
  let db: DataSource;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'bulkinsert', env: { APP_ROLE: 'api' } });
    db = t.app.get(DataSource);
    account = await createAccount(t, { environment: 'test' });
  });
  after(async () => {
    await t.close();
  });

  /** A row with the values an array literal must escape: quotes, backslashes, braces, commas, NULL as text, unicode, nested arrays. */
  function audioRow(tricky: string, now: Date): AudioTaskEntity {
    return Object.assign(new AudioTaskEntity(), {
      ...newPaidTaskColumns(newId('audio'), { id: account.keyId, workspaceId: account.workspaceId, environment: 'test' as const }, now),
      holdId: '00000000-0000-4000-8000-000000000001',
      chargedMicros: 2n ** 60n + 1n,
      failureReason: tricky,
      model: 'voice_v4',
      mode: 'text_to_speech',
      endpoint: 'generations',
      request: { inputs: [{ text: tricky, voiceId: 'v"1' }, { text: 'NULL', voiceId: '{a,b}' }], outputFormat: 'mp3_44100_128', seed: 7 },
      adapter: 'sandbox',
      status: 'queued',
      phase: null,
      attempts: 0,
      submittedAt: null,
      leaseExpiresAt: new Date(now.getTime() + 1234),
      contentType: null,
      mediaBytes: 0n,
      outputSeconds: 1.25,
      inputCharacters: 42,
      billableCharacters: null,
      webhookEndpointId: null,
    } satisfies AudioTaskEntity);
  }

  const stored = (ids: string[]) => t.db.query<{ row: Record<string, unknown> }>(`SELECT to_jsonb(x) - 'id' AS row FROM audio_task x WHERE id = ANY($1)`, [ids]);

  it('stores audio task and idempotency rows exactly as EntityManager.insert does', async () => {
    const tricky = `say "hi" \\ {x, y} 'quoted' NULL é 💬 \t new\nline`;
    const now = new Date('2026-11-24T10:00:00.123Z');
    const viaTypeorm = [audioRow(tricky, now)];
    const viaUnnest = [audioRow(tricky, now)];
    const record = (task: AudioTaskEntity, key: string) =>
      Object.assign(new AudioIdempotencyEntity(), { apiKeyId: account.keyId, endpoint: 'generations' as const, key, requestHash: 'h"\\', taskId: task.id, createdAt: now });
    await inTransaction(db, async (tx) => {
      await (tx as unknown as { insert: (target: unknown, rows: unknown) => Promise<unknown> }).insert(AudioTaskEntity, viaTypeorm);
      await (tx as unknown as { insert: (target: unknown, rows: unknown) => Promise<unknown> }).insert(AudioIdempotencyEntity, [record(viaTypeorm[0]!, 'k{1}')]);
      await insertRows(tx, AudioTaskEntity, viaUnnest);
      await insertRows(tx, AudioIdempotencyEntity, [record(viaUnnest[0]!, 'k{2}')]);
    });
    const [typeormTask, unnestTask] = await Promise.all([stored(viaTypeorm.map((r) => r.id)), stored(viaUnnest.map((r) => r.id))]);
    assert.deepEqual(unnestTask, typeormTask);
    assert.equal((typeormTask[0]!.row.request as { inputs: Array<{ text: string }> }).inputs[0]!.text, tricky);
    const records = await t.db.query<{ key: string; row: Record<string, unknown> }>(
      `SELECT key, to_jsonb(x) - 'key' - 'task_id' AS row FROM audio_idempotency x WHERE task_id = ANY($1) ORDER BY key`,
      [[viaTypeorm[0]!.id, viaUnnest[0]!.id]],
    );
    assert.deepEqual(records.map((r) => r.key), ['k{1}', 'k{2}']);
    assert.deepEqual(records[1]!.row, records[0]!.row);
  });

  it('writes many rows in one statement, and fails as TypeORM does (QueryFailedError)', async () => {
    const now = new Date();
    const rows = Array.from({ length: 5 }, (_, i) => audioRow(`row ${i}`, now));
    await inTransaction(db, (tx) => insertRows(tx, AudioTaskEntity, rows));
    const [count] = await t.db.query<{ n: string }>('SELECT count(*) AS n FROM audio_task WHERE id = ANY($1)', [rows.map((r) => r.id)]);
    assert.equal(Number(count!.n), 5);

    await assert.rejects(
      inTransaction(db, (tx) => insertRows(tx, AudioTaskEntity, [audioRow('again', now), rows[2]!])),
      (error: unknown) => error instanceof QueryFailedError && (error.driverError as { code?: string }).code === '23505',
    );
  });
});
