import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { DomainError } from '../../libs/common/index.js';
import { AudioPendingCount1763800001600 } from '../../src/database/migrations/1763800001600-audio-pending-count.js';
import { AudioGenerationService } from '../../src/modules/audio/audio-generation.service.js';
import { AudioTaskRunner } from '../../src/modules/audio/audio-task.runner.js';
import type { AuthenticatedKey } from '../../src/modules/identity/index.js';
import { createAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { voicesFor } from './audio-helpers.js';

/**
 * The per-key counter of unfinished audio tasks (`audio_pending_count`, kept by triggers on
 * `audio_task`; docs/decisions.md › A per-key counter of pending audio tasks), which the 429 limit
 * reads. Random steps drive tasks through the code that moves them — creations alone and in
 * batches (with idempotency repeats and 429s), streaming speech's creations, claims, completions,
 * failures, lost streams — and through an operator's SQL (status edits, deletes), several at once;
 * after each step the counter of every key (the sum of its slots) must equal the count of its queued
 * and processing rows.
 */

const MODEL = 'voice_v4';
const PENDING_LIMIT = 8;
const KEYS = 2;

/** How the sandbox answers a task created with this directive when a worker runs it. */
type Directive = 'none' | 'fail' | 'uncertain';

type Step =
  /** `idempotency`: none, a new key for each creation, or one of a few keys (replays and 409s). */
  | { op: 'create'; key: number; count: number; idempotency: 'none' | 'fresh' | number; directive: Directive; streaming: boolean }
  | { op: 'run' | 'claim' | 'finish' | 'failStream' | 'streamLost' | 'delete'; task: number }
  | { op: 'operatorStatus'; task: number; status: 'queued' | 'processing' | 'succeeded' | 'failed' | 'cancelled' };

describe('audio pending counter (triggers on audio_task, real PostgreSQL)', () => {
  let t: TestApp;
  let audio: AudioGenerationService;
  let runner: AudioTaskRunner;
  const voice = () => voicesFor(MODEL)[0]!.id;

  before(async () => {
    t = await bootTestApp({ label: 'audiopending', env: { APP_ROLE: 'api', AUDIO_MAX_PENDING_PER_KEY: String(PENDING_LIMIT) } });
    audio = t.app.get(AudioGenerationService);
    runner = t.app.get(AudioTaskRunner);
  });
  after(async () => {
    await t.close();
  });

  async function key(): Promise<AuthenticatedKey> {
    const account = await createAccount(t, { creditUsd: 100, environment: 'test' });
    return { id: account.keyId, workspaceId: account.workspaceId, environment: 'test' };
  }

  function create(owner: AuthenticatedKey, step: Extract<Step, { op: 'create' }>, n: number) {
    const directive = step.directive === 'none' ? '' : ` [sandbox:${step.directive}]`;
    return audio.create(owner, { model: MODEL, mode: 'text_to_speech', prompt: `pending count ${n}${directive}`, controls: { voiceId: voice() } } as never, {
      endpoint: step.streaming ? 'speech' : 'generations',
      ...(step.idempotency === 'none' ? {} : { idempotencyKey: step.idempotency === 'fresh' ? `fresh-${n}` : `pc-${step.idempotency}` }),
      // Streaming speech's creation: `processing`/`streaming` under a lease, no job.
      ...(step.streaming ? { streamLeaseMs: 60_000, enqueue: false } : {}),
    });
  }

  /** The counter and the real count of unfinished rows, per key (0 where a key has no counter row). */
  async function counts(keyIds: string[]): Promise<{ counter: Record<string, number>; real: Record<string, number> }> {
    const counter = await t.db.query<{ api_key_id: string; pending: string }>(
      'SELECT api_key_id, sum(pending) AS pending FROM audio_pending_count WHERE api_key_id = ANY($1) GROUP BY api_key_id',
      [keyIds],
    );
    const real = await t.db.query<{ api_key_id: string; n: string }>(
      `SELECT api_key_id, count(*) AS n FROM audio_task WHERE api_key_id = ANY($1) AND status IN ('queued', 'processing') GROUP BY api_key_id`,
      [keyIds],
    );
    const zero = () => Object.fromEntries(keyIds.map((id) => [id, 0]));
    return {
      counter: Object.assign(zero(), Object.fromEntries(counter.map((row) => [row.api_key_id, Number(row.pending)]))),
      real: Object.assign(zero(), Object.fromEntries(real.map((row) => [row.api_key_id, Number(row.n)]))),
    };
  }

  const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('create' as const),
        key: fc.nat(KEYS - 1),
        count: fc.integer({ min: 1, max: 8 }),
        idempotency: fc.oneof(fc.constantFrom('none' as const, 'fresh' as const), fc.nat(3)),
        directive: fc.constantFrom<Directive>('none', 'fail', 'uncertain'),
        streaming: fc.boolean(),
      }),
    },
    { weight: 6, arbitrary: fc.record({ op: fc.constantFrom('run' as const, 'claim' as const, 'finish' as const, 'failStream' as const, 'streamLost' as const), task: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), task: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({ op: fc.constant('operatorStatus' as const), task: fc.nat(), status: fc.constantFrom('queued' as const, 'processing' as const, 'succeeded' as const, 'failed' as const, 'cancelled' as const) }),
    },
  );

  it('equals the count of queued and processing rows of each key after every step', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(stepArbitrary, { minLength: 1, maxLength: 4 }), { minLength: 4, maxLength: 14 }), async (rounds) => {
        const keys = await Promise.all(Array.from({ length: KEYS }, () => key()));
        const keyIds = keys.map((k) => k.id);
        /** Tasks created in this run, with the directive the sandbox answers them with. */
        const tasks: Array<{ id: string; directive: Directive }> = [];
        let made = 0;

        async function apply(step: Step): Promise<void> {
          if (step.op === 'create') {
            const settled = await Promise.allSettled(Array.from({ length: step.count }, () => create(keys[step.key]!, step, made++)));
            for (const result of settled) {
              if (result.status === 'rejected') {
                assert.ok(result.reason instanceof DomainError && [409, 429].includes(result.reason.status), `an expected refusal: ${String(result.reason)}`);
                seen.add(String(result.reason.status));
              } else if (!result.value.replayed) tasks.push({ id: result.value.task.id, directive: step.directive });
            }
            return;
          }
          const task = tasks[step.task % Math.max(tasks.length, 1)];
          if (!task) return;
          seen.add(step.op);
          switch (step.op) {
            case 'run':
              // A worker's run: the sandbox fails or loses the answer without rendering; a plain task
              // is claimed and finished with its audio, as after a synthesis.
              if (task.directive !== 'none') await runner.run(task.id);
              else if (await runner.claim(task.id)) await runner.finishWithAudio(task.id, Buffer.alloc(3200), 20);
              return;
            case 'claim':
              await runner.claim(task.id);
              return;
            case 'finish':
              await runner.finishWithAudio(task.id, Buffer.alloc(3200), 20);
              return;
            case 'failStream':
              await runner.failStream(task.id, 'the stream broke (test)');
              return;
            case 'streamLost':
              await runner.streamLost(task.id, 'the answer was lost (test)');
              return;
            case 'delete':
              await t.db.query('DELETE FROM audio_idempotency WHERE task_id = $1', [task.id]);
              await t.db.query('DELETE FROM audio_task WHERE id = $1', [task.id]);
              tasks.splice(tasks.indexOf(task), 1);
              return;
            case 'operatorStatus':
              await t.db.query('UPDATE audio_task SET status = $2 WHERE id = $1', [task.id, step.status]);
              return;
          }
        }

        for (const round of rounds) {
          await Promise.all(round.map(apply));
          const { counter, real } = await counts(keyIds);
          assert.deepEqual(counter, real, `after ${JSON.stringify(round)}`);
        }
      }),
      { numRuns: 12 },
    );
    for (const expected of ['429', 'run', 'finish', 'failStream', 'delete', 'operatorStatus']) assert.ok(seen.has(expected), `${expected} in ${[...seen].join(', ')}`);
    // Changes made on different connections went to different slots of one key's count.
    const [slots] = await t.db.query<{ n: number }>('SELECT max(n)::int AS n FROM (SELECT count(*) AS n FROM audio_pending_count GROUP BY api_key_id) AS k');
    assert.ok(slots!.n > 1, `a key counted in ${slots!.n} slots`);
  });

  it("the migration's backfill counts the rows already there, for each key", async () => {
    const owners = [await key(), await key()];
    const plain = { op: 'create', key: 0, count: 1, idempotency: 'none', directive: 'fail', streaming: false } as const;
    const created = await Promise.all(owners.flatMap((owner, k) => Array.from({ length: 3 + k }, (_, n) => create(owner, plain, 1000 + 10 * k + n))));
    await runner.run(created[0]!.task.id);
    const ids = owners.map((owner) => owner.id);
    const kept = await counts(ids);
    // Down and up again in one transaction: the counters come from the backfill alone.
    const migration = new AudioPendingCount1763800001600();
    const queryRunner = t.app.get(DataSource).createQueryRunner();
    try {
      await queryRunner.startTransaction();
      await migration.down(queryRunner);
      await migration.up(queryRunner);
      await queryRunner.commitTransaction();
    } finally {
      await queryRunner.release();
    }
    const backfilled = await counts(ids);
    assert.deepEqual(backfilled.counter, backfilled.real);
    assert.deepEqual(backfilled.counter, kept.counter);
    assert.deepEqual(Object.values(backfilled.counter), [2, 4]);
  });

  it('answers 429 at the limit, and again accepts once a task of the key has finished', async () => {
    const owner = await key();
    const plain = { op: 'create', key: 0, count: 1, idempotency: 'none', directive: 'fail', streaming: false } as const;
    // At once, so some of them share a batch (the set-based path), then one alone.
    const first = await Promise.all(Array.from({ length: PENDING_LIMIT - 1 }, (_, n) => create(owner, plain, 2000 + n)));
    await create(owner, plain, 2100);
    const refuse = async (n: number) => {
      await assert.rejects(create(owner, plain, n), (error: unknown) => error instanceof DomainError && error.status === 429 && error.code === 'audio.too_many_pending');
    };
    await refuse(2200);
    const burst = await Promise.allSettled(Array.from({ length: 4 }, (_, n) => create(owner, plain, 2300 + n)));
    assert.deepEqual(
      burst.map((r) => (r.status === 'rejected' && r.reason instanceof DomainError ? r.reason.status : r.status)),
      [429, 429, 429, 429],
    );

    await runner.run(first[0]!.task.id);
    await create(owner, plain, 2400);
    await refuse(2500);
    const { counter } = await counts([owner.id]);
    assert.equal(counter[owner.id], PENDING_LIMIT);
  });
});
