import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { DomainError } from '../../libs/common/index.js';
import { AudioGenerationService } from '../../src/modules/audio/audio-generation.service.js';
import { PriceCatalogue } from '../../src/modules/billing/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import type { AuthenticatedKey } from '../../src/modules/identity/index.js';
import { VideoTaskService } from '../../src/modules/video/video-task.service.js';
import { Queues } from '../../src/queue/queues.js';
import { TaskCreations } from '../../src/queue/task-creations.js';
import { voicesFor } from '../audio/audio-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/**
 * Group commit of task creations (TaskCreations, issue 17): creations that arrive while one is
 * being written go together in one transaction, yet each must be judged exactly as the same
 * creations made one after another in arrival order. Each property run makes a random mix of
 * video and audio creations (402s from a short wallet, idempotency repeats with the same and
 * another body, 429s past the pending limit) twice, on two identical accounts: all at once, then
 * one at a time in the order the first run's creations reached TaskCreations; outcomes, wallet,
 * rows and jobs must be the same.
 */

const VIDEO_MODEL = 'vendor-omni-1.1-flash-preview';
const AUDIO_MODEL = 'voice_v4';
const PENDING_LIMIT = 12;

interface Request {
  kind: 'video' | 'audio';
  /** Video: 720p or 1080p (two hold amounts); audio: how long the text is. */
  size: number;
  /** Audio: an Idempotency-Key from a small pool (repeats), or none. */
  idempotencyKey?: number;
  /** Audio: another text with the same key (a conflict when repeated). */
  variant: boolean;
}

/** A creation's outcome, comparable across runs: created, a replay of request `of`, or a refusal. */
type Outcome = { created: true } | { replayOf: number } | { status: number; code: string };

describe('task creation group commit (batch equals sequential, real PostgreSQL and Redis)', () => {
  let t: TestApp;
  let creations: TaskCreations;
  let video: VideoTaskService;
  let audio: AudioGenerationService;
  let prices: PriceCatalogue;
  let queues: Queues;
  const arrival = new AsyncLocalStorage<number>();
  let arrivals: number[] = [];

  before(async () => {
    t = await bootTestApp({ label: 'creationgc', env: { APP_ROLE: 'api', AUDIO_MAX_PENDING_PER_KEY: String(PENDING_LIMIT) } });
    creations = t.app.get(TaskCreations);
    video = t.app.get(VideoTaskService);
    audio = t.app.get(AudioGenerationService);
    prices = t.app.get(PriceCatalogue);
    queues = t.app.get(Queues);
    // Records the order in which creations reach the group commit (the order the batch judges in).
    const submit = creations.create.bind(creations);
    creations.create = ((kind, input) => {
      const index = arrival.getStore();
      if (index !== undefined) arrivals.push(index);
      return submit(kind, input);
    }) as TaskCreations['create'];
  });
  after(async () => {
    await t.close();
  });

  const voice = () => voicesFor(AUDIO_MODEL)[0]!.id;
  const audioText = (request: Request) => `${'Hello from the creation tests. '.repeat(request.size)}${request.variant ? 'Once more.' : ''}`;

  function cost(key: AuthenticatedKey, request: Request): bigint {
    const context = { workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment };
    return request.kind === 'video'
      ? prices.videoMaxCost(context, VIDEO_MODEL, request.size % 2 === 0 ? '720p' : '1080p')
      : prices.speechCost(context, AUDIO_MODEL, audioText(request).length);
  }

  /** One creation through the domain's service, as its controller calls it. */
  async function create(key: AuthenticatedKey, request: Request): Promise<{ id: string; replayed: boolean }> {
    if (request.kind === 'video') {
      const task = await video.create(key, { model: VIDEO_MODEL, prompt: 'a group commit', controls: { duration: 3, resolution: request.size % 2 === 0 ? '720p' : '1080p' } } as never);
      return { id: task.id, replayed: false };
    }
    const { task, replayed } = await audio.create(key, { model: AUDIO_MODEL, mode: 'text_to_speech', prompt: audioText(request), controls: { voiceId: voice() } } as never, {
      endpoint: 'generations',
      ...(request.idempotencyKey !== undefined ? { idempotencyKey: `key-${request.idempotencyKey}` } : {}),
    });
    return { id: task.id, replayed };
  }

  async function account(balance: bigint): Promise<AuthenticatedKey> {
    const created = await createAccount(t, { environment: 'test' });
    if (balance > 0n) await t.app.get(WalletService).credit(created.workspaceId, 'test', balance, `cgc-${created.workspaceId}`);
    return { id: created.keyId, workspaceId: created.workspaceId, environment: 'test' };
  }

  function outcomes(settled: Array<PromiseSettledResult<{ id: string; replayed: boolean }>>): Outcome[] {
    const creator = new Map<string, number>();
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled' && !result.value.replayed) creator.set(result.value.id, i);
    });
    return settled.map((result): Outcome => {
      if (result.status === 'rejected') {
        const error = result.reason as unknown;
        assert.ok(error instanceof DomainError, `a refusal is a DomainError: ${String(error)}`);
        return { status: error.status, code: error.code };
      }
      if (!result.value.replayed) return { created: true };
      const of = creator.get(result.value.id);
      assert.ok(of !== undefined, `a replay answers a task created in this run (${result.value.id})`);
      return { replayOf: of };
    });
  }

  /** What the account ends with: wallet, holds, rows, idempotency records, and a job per created task. */
  async function state(key: AuthenticatedKey, created: string[]) {
    const [row] = await t.db.query<Record<'balance_micros' | 'held_micros' | 'open_holds' | 'held_total' | 'ledger_held' | 'video_rows' | 'audio_rows' | 'idempotency_rows' | 'video_matched' | 'audio_matched', string>>(
      `SELECT w.balance_micros, w.held_micros,
              (SELECT count(*) FROM hold WHERE workspace_id = $1 AND status = 'open') AS open_holds,
              (SELECT coalesce(sum(amount_micros), 0) FROM hold WHERE workspace_id = $1) AS held_total,
              (SELECT coalesce(sum(held_delta_micros), 0) FROM ledger_entry WHERE workspace_id = $1) AS ledger_held,
              (SELECT count(*) FROM video_task WHERE workspace_id = $1) AS video_rows,
              (SELECT count(*) FROM audio_task WHERE workspace_id = $1) AS audio_rows,
              (SELECT count(*) FROM audio_idempotency WHERE api_key_id = $2) AS idempotency_rows,
              (SELECT count(*) FROM video_task v JOIN hold h ON h.id = v.hold_id AND h.subject_id = v.id WHERE v.workspace_id = $1) AS video_matched,
              (SELECT count(*) FROM audio_task a JOIN hold h ON h.id = a.hold_id AND h.subject_id = a.id WHERE a.workspace_id = $1) AS audio_matched
       FROM wallet w WHERE w.workspace_id = $1 AND w.environment = 'test'`,
      [key.workspaceId, key.id],
    );
    let jobs = 0;
    for (const id of created) {
      const job = id.startsWith('omni:') ? await queues.getJob('video', `video:${id}`) : await queues.getJob('audio', `audio:${id}`);
      if (job) jobs++;
    }
    assert.ok(row, 'the wallet exists');
    return { ...row, jobs };
  }

  const requestArb = (kinds: 'video' | 'audio' | 'mixed') =>
    fc.record({
      kind: kinds === 'mixed' ? fc.constantFrom<'video' | 'audio'>('video', 'audio') : fc.constant(kinds),
      size: fc.integer({ min: 1, max: 4 }),
      idempotencyKey: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
      variant: fc.boolean(),
    });
  const mixArb = fc
    .constantFrom<'video' | 'audio' | 'mixed'>('video', 'audio', 'mixed')
    .chain((kinds) => fc.record({ requests: fc.array(requestArb(kinds), { minLength: 2, maxLength: 36 }), affordable: fc.double({ min: 0.1, max: 1.1, noNaN: true }) }));

  it('random mixes: all at once gives what one at a time in arrival order gives (outcomes, wallet, rows, jobs)', async () => {
    const before = creations.counters();
    await fc.assert(
      fc.asyncProperty(mixArb, async ({ requests, affordable }) => {
        const probe = await account(0n);
        const total = requests.reduce((sum, request) => sum + cost(probe, request), 0n);
        const balance = (total * BigInt(Math.round(affordable * 1000))) / 1000n;

        const batchKey = await account(balance);
        arrivals = [];
        const batch = await Promise.allSettled(requests.map((request, i) => arrival.run(i, () => create(batchKey, request))));
        const order = [...arrivals, ...requests.keys()].filter((i, k, all) => all.indexOf(i) === k);

        const sequentialKey = await account(balance);
        const sequential: Array<PromiseSettledResult<{ id: string; replayed: boolean }>> = new Array(requests.length);
        for (const i of order) {
          sequential[i] = await create(sequentialKey, requests[i]!).then(
            (value) => ({ status: 'fulfilled' as const, value }),
            (reason: unknown) => ({ status: 'rejected' as const, reason }),
          );
        }

        const batchOutcomes = outcomes(batch);
        assert.deepEqual(batchOutcomes, outcomes(sequential), `arrival order ${JSON.stringify(order)}`);
        const createdIds = (settled: typeof batch) => settled.flatMap((r) => (r.status === 'fulfilled' && !r.value.replayed ? [r.value.id] : []));
        const batchState = await state(batchKey, createdIds(batch));
        assert.deepEqual(batchState, await state(sequentialKey, createdIds(sequential)));
        assert.equal(batchState.jobs, createdIds(batch).length, 'a job for every created task');
        assert.equal(Number(batchState.video_matched) + Number(batchState.audio_matched), createdIds(batch).length, 'every row has its own hold');
      }),
      { numRuns: 24 },
    );
    const now = creations.counters();
    console.log(`creation group commit: ${now.items - before.items} creations in ${now.calls - before.calls} transactions (largest ${now.largest}, ${now.redone - before.redone} batches redone alone)`);
    assert.ok(now.calls - before.calls < now.items - before.items, `batches formed: ${now.calls - before.calls} transactions for ${now.items - before.items} creations`);
    assert.ok(now.largest > 1);
    // The same counts reach operators through /metrics (the bench reads them to print batch sizes).
    const text = await (await t.request('/metrics')).text();
    const gauge = (count: string) => metricSample(text, 'svc_task_creation_group_commit', `{count="${count}"}`);
    const scraped = creations.counters();
    assert.deepEqual({ calls: gauge('calls'), items: gauge('items'), redone: gauge('redone') }, { calls: scraped.calls, items: scraped.items, redone: scraped.redone });
  });

  it("creations with the caller's own writes (a realtime turn's hook): a refused one, or one whose writes fail, rolls back only itself", async () => {
    await t.db.query('CREATE TABLE IF NOT EXISTS creation_hook_row (id text PRIMARY KEY, task_id text NOT NULL)');
    const request: Request = { kind: 'audio', size: 2, variant: false };
    const probe = await account(0n);

    /** 12 turns on a wallet that affords 8, each writing a row of its own in its hook (turn `duplicate` reuses turn 2's row id). */
    async function turns(duplicate?: number) {
      const key = await account(cost(probe, request) * 8n);
      const before = creations.counters();
      const settled = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          audio.create(key, { model: AUDIO_MODEL, mode: 'text_to_speech', prompt: audioText(request), controls: { voiceId: voice() } } as never, {
            endpoint: 'generations',
            beforeHold: async (tx, task) => {
              const rowId = `${key.id}-${i === duplicate ? 2 : i}`;
              await (tx as unknown as { query: (sql: string, values: unknown[]) => Promise<unknown> }).query('INSERT INTO creation_hook_row (id, task_id) VALUES ($1, $2)', [rowId, task.id]);
            },
          }),
        ),
      );
      const now = creations.counters();
      assert.ok(now.calls - before.calls < 12, `batches formed (${now.calls - before.calls} transactions)`);
      const created = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value.task.id] : []));
      const rows = await t.db.query<{ task_id: string }>('SELECT task_id FROM creation_hook_row WHERE id LIKE $1', [`${key.id}-%`]);
      assert.deepEqual(rows.map((r) => r.task_id).sort(), [...created].sort(), 'a hook row for each created task, none for a refused or failed one');
      return settled.map((r) => (r.status === 'fulfilled' ? 200 : r.reason instanceof DomainError ? r.reason.status : 'error'));
    }

    assert.deepEqual(await turns(), [...Array.from({ length: 8 }, () => 200), ...Array.from({ length: 4 }, () => 402)]);
    const statuses = await turns(5);
    assert.equal(statuses[5], 'error', 'the unique violation fails its creation alone');
    assert.deepEqual(
      statuses.filter((_, i) => i !== 5),
      [...Array.from({ length: 8 }, () => 200), ...Array.from({ length: 3 }, () => 402)],
    );
  });

  it("the next batch commits while the last one's jobs go to Redis, and no creation answers before its job is there", async () => {
    const key = await account(cost(await account(0n), { kind: 'video', size: 2, variant: false }) * 20n);
    // Redis answers the first addBulk only when the test lets it (the real call, held back).
    const addBulk = queues.addBulk.bind(queues);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    queues.addBulk = (async (...args: Parameters<Queues['addBulk']>) => {
      if (calls++ === 0) await held;
      return addBulk(...args);
    }) as Queues['addBulk'];
    try {
      let firstAnswered = false;
      const first = create(key, { kind: 'video', size: 2, variant: false }).then((made) => ((firstAnswered = true), made));
      const rows = async () => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM video_task WHERE api_key_id = $1', [key.id]))[0]!.n);
      await eventually(async () => calls, (n) => n === 1, "the first creation's addBulk to start");
      // Without the overlap they would wait for the held call for ever: fail instead of hanging.
      let guard: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => (guard = setTimeout(() => reject(new Error("the later creations waited for the first one's addBulk")), 20_000)));
      const second = await Promise.race([Promise.all(Array.from({ length: 3 }, () => create(key, { kind: 'video', size: 2, variant: false }))), stuck]).finally(() => clearTimeout(guard));
      assert.equal(await rows(), 4, 'the later creations committed and answered while the first one waited for Redis');
      assert.equal(firstAnswered, false, 'the first creation has not answered: its job is not in Redis yet');
      for (const made of second) assert.ok(await queues.getJob('video', `video:${made.id}`), 'each answered creation has its job');
      release();
      const made = await first;
      assert.ok(await queues.getJob('video', `video:${made.id}`), "the first creation's job, once it answered");
    } finally {
      release();
      queues.addBulk = addBulk;
    }
  });

  it('a mix covers every outcome: created, replayed, 409 conflict, 402 and 429', async () => {
    const key = await account(0n);
    const requests: Request[] = Array.from({ length: 30 }, (_, i) => ({
      kind: i % 3 === 0 ? 'video' : 'audio',
      size: 1 + (i % 4),
      idempotencyKey: i % 5 === 0 ? undefined : i % 4,
      variant: i % 7 === 0,
    }));
    const total = requests.reduce((sum, request) => sum + cost(key, request), 0n);
    const batchKey = await account(total / 3n);
    const settled = await Promise.allSettled(requests.map((request) => create(batchKey, request)));
    const seen = new Set(outcomes(settled).map((o) => ('created' in o ? 'created' : 'replayOf' in o ? 'replayed' : String(o.status))));
    for (const expected of ['created', 'replayed', '409', '402']) assert.ok(seen.has(expected), `${expected} in ${[...seen].join(', ')}`);
    // Past the pending limit of one key: 429 for the rest, in the same batches.
    const manyKey = await account(total * 10n);
    const many = await Promise.allSettled(Array.from({ length: PENDING_LIMIT + 8 }, () => create(manyKey, { kind: 'audio', size: 1, variant: false })));
    const refused = outcomes(many).filter((o) => 'status' in o);
    assert.deepEqual(refused, Array.from({ length: 8 }, () => ({ status: 429, code: 'audio.too_many_pending' })));
  });
});
