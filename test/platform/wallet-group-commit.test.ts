import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { QueryRunner } from 'typeorm';
import { DomainError } from '../../libs/common/index.js';
import { WalletBatch1763800000200 } from '../../src/database/migrations/1763800000200-wallet-batch.js';
import { SetBasedResolutions1763800000500 } from '../../src/database/migrations/1763800000500-set-based-resolutions.js';
import { textListCost } from '../support/list-prices.js';
import { type HoldResolution, WalletRepository } from '../../src/modules/billing/wallet.repository.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import type { KeyEnvironment } from '../../src/modules/identity/api-key.entity.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds } from '../text/text-helpers.js';

/**
 * Group commit of wallet holds and resolutions (WalletRepository, svc_hold_many,
 * svc_resolve_many) on real PostgreSQL. Requests queue in submission order and at most one
 * batched call is in flight, so the outcome must be exactly that of the same requests made one
 * after the other in submission order: the tests compare with that sequential model.
 */

/** A small deterministic PRNG (mulberry32): the same amounts on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface WalletSums {
  balance: bigint;
  held: bigint;
  version: bigint;
  ledgerBalance: bigint;
  ledgerHeld: bigint;
  openHeld: bigint;
  holdRows: number;
  holdEntries: number;
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

function isInsufficient(reason: unknown): boolean {
  return reason instanceof DomainError && reason.status === 402 && reason.code === 'insufficient_balance';
}

describe('wallet group commit (batched holds and resolutions, real PostgreSQL)', () => {
  let t: TestApp;
  let wallet: WalletService;
  let repository: WalletRepository;

  before(async () => {
    t = await bootTestApp({ label: 'groupcommit' });
    wallet = t.app.get(WalletService);
    repository = t.app.get(WalletRepository);
  });
  after(async () => {
    await t.close();
  });

  async function sums(workspaceId: string, environment: KeyEnvironment): Promise<WalletSums> {
    const [row] = await t.db.query<Record<string, string>>(
      `SELECT w.balance_micros, w.held_micros, w.version,
              (SELECT coalesce(sum(balance_delta_micros), 0) FROM ledger_entry WHERE workspace_id = $1 AND environment = $2) AS ledger_balance,
              (SELECT coalesce(sum(held_delta_micros), 0) FROM ledger_entry WHERE workspace_id = $1 AND environment = $2) AS ledger_held,
              (SELECT coalesce(sum(amount_micros), 0) FROM hold WHERE workspace_id = $1 AND environment = $2 AND status = 'open') AS open_held,
              (SELECT count(*) FROM hold WHERE workspace_id = $1 AND environment = $2) AS hold_rows,
              (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1 AND environment = $2 AND kind = 'hold') AS hold_entries
       FROM wallet w WHERE w.workspace_id = $1 AND w.environment = $2`,
      [workspaceId, environment],
    );
    assert.ok(row, `wallet ${workspaceId}/${environment} exists`);
    return {
      balance: BigInt(row.balance_micros!),
      held: BigInt(row.held_micros!),
      version: BigInt(row.version!),
      ledgerBalance: BigInt(row.ledger_balance!),
      ledgerHeld: BigInt(row.ledger_held!),
      openHeld: BigInt(row.open_held!),
      holdRows: Number(row.hold_rows),
      holdEntries: Number(row.hold_entries),
    };
  }

  function counters() {
    return repository.batchCounters();
  }

  it('many concurrent holds of mixed amounts on one wallet: exactly those that fit in arrival order are accepted', async () => {
    const account = await createAccount(t);
    const balance = 150_000n;
    await wallet.credit(account.workspaceId, 'live', balance, `gc-${account.workspaceId}`);
    const random = prng(20261123);
    const choices = [700n, 1_000n, 1_300n, 2_500n, 4_000n];
    const amounts = Array.from({ length: 300 }, () => choices[Math.floor(random() * choices.length)]!);

    // The sequential model: each hold, in submission order, is accepted iff the rest covers it.
    let available = balance;
    const expected = amounts.map((amount) => {
      if (amount > available) return false;
      available -= amount;
      return true;
    });
    const affordable = expected.filter(Boolean).length;
    const heldExpected = balance - available;

    const before = counters().holds;
    const results = await Promise.allSettled(
      amounts.map((amountMicros, i) =>
        wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros, subjectType: 'gc', subjectId: String(i) }),
      ),
    );
    const now = counters().holds;
    const calls = now.calls - before.calls;
    const items = now.items - before.items;
    console.log(`group commit, one wallet: ${affordable} of ${amounts.length} affordable; ${items} holds in ${calls} calls (largest ${now.largest})`);

    assert.ok(affordable > 50 && affordable < amounts.length - 50, `a test that refuses some and accepts some (${affordable})`);
    assert.deepEqual(
      results.map((r) => r.status === 'fulfilled'),
      expected,
      'accepted exactly the holds the sequential model accepts',
    );
    for (const r of results) if (r.status === 'rejected') assert.ok(isInsufficient(r.reason), String(r.reason));
    const ids = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    assert.equal(new Set(ids).size, affordable, 'every accepted hold has its own id');

    assert.equal(items, amounts.length);
    assert.ok(calls < items, `batches formed: ${calls} calls for ${items} holds`);
    assert.ok(now.largest > 1);

    const s = await sums(account.workspaceId, 'live');
    assert.deepEqual(s, {
      balance,
      held: heldExpected,
      version: 1n + BigInt(affordable),
      ledgerBalance: balance,
      ledgerHeld: heldExpected,
      openHeld: heldExpected,
      holdRows: affordable,
      holdEntries: affordable,
    });
    // Each hold row is the request that got its id (amount and subject), none for refused ones.
    const rows = await t.db.query<{ id: string; amount: string; subject_id: string }>(
      `SELECT id, amount_micros::text AS amount, subject_id FROM hold WHERE workspace_id = $1`,
      [account.workspaceId],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    results.forEach((r, i) => {
      if (r.status !== 'fulfilled') return;
      assert.deepEqual(byId.get(r.value), { id: r.value, amount: String(amounts[i]), subject_id: String(i) });
    });
  });

  it('concurrent holds over several wallets (both environments, one without a wallet row) in the same batches', async () => {
    const accounts: TestAccount[] = [];
    for (let i = 0; i < 4; i++) accounts.push(await createAccount(t));
    const noWallet = await createAccount(t); // never credited: no wallet row at all
    const targets: Array<{ account: TestAccount; env: KeyEnvironment; balance: bigint }> = [
      { account: accounts[0]!, env: 'live', balance: 20_000n },
      { account: accounts[0]!, env: 'test', balance: 9_000n },
      { account: accounts[1]!, env: 'live', balance: 55_000n },
      { account: accounts[2]!, env: 'live', balance: 3_000n },
      { account: accounts[3]!, env: 'live', balance: 100_000n },
      { account: noWallet, env: 'live', balance: 0n },
    ];
    for (const target of targets) {
      if (target.balance > 0n) await wallet.credit(target.account.workspaceId, target.env, target.balance, `gc-${target.account.workspaceId}-${target.env}`);
    }
    const random = prng(7);
    const requests = Array.from({ length: 240 }, (_, i) => ({
      target: targets[i % targets.length]!,
      amount: BigInt(500 + Math.floor(random() * 8) * 250),
    }));
    const available = new Map(targets.map((target) => [target, target.balance]));
    const expected = requests.map(({ target, amount }) => {
      const left = available.get(target)!;
      if (amount > left) return false;
      available.set(target, left - amount);
      return true;
    });

    const before = counters().holds;
    const results = await Promise.allSettled(
      requests.map(({ target, amount }, i) =>
        wallet.hold({ workspaceId: target.account.workspaceId, environment: target.env, apiKeyId: null, amountMicros: amount, subjectType: 'gc-multi', subjectId: String(i) }),
      ),
    );
    const now = counters().holds;
    assert.ok(now.calls - before.calls < requests.length, `batches formed: ${now.calls - before.calls} calls for ${requests.length} holds`);
    assert.deepEqual(
      results.map((r) => r.status === 'fulfilled'),
      expected,
    );
    for (const r of results) if (r.status === 'rejected') assert.ok(isInsufficient(r.reason), String(r.reason));

    for (const target of targets) {
      const accepted = requests.filter((request, i) => request.target === target && expected[i]);
      const held = accepted.reduce((sum, request) => sum + request.amount, 0n);
      if (target.balance === 0n) {
        assert.equal(accepted.length, 0);
        const rows = await t.db.query(`SELECT 1 FROM hold WHERE workspace_id = $1 UNION ALL SELECT 1 FROM wallet WHERE workspace_id = $1`, [target.account.workspaceId]);
        assert.equal(rows.length, 0, 'a wallet that does not exist refuses and is not created');
        continue;
      }
      assert.deepEqual(await sums(target.account.workspaceId, target.env), {
        balance: target.balance,
        held,
        version: 1n + BigInt(accepted.length),
        ledgerBalance: target.balance,
        ledgerHeld: held,
        openHeld: held,
        holdRows: accepted.length,
        holdEntries: accepted.length,
      });
    }
    // One call is one transaction (one `now()`): some transaction wrote holds on several wallets.
    const [spanning] = await t.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM (
         SELECT created_at FROM hold WHERE subject_type = 'gc-multi'
         GROUP BY created_at HAVING count(DISTINCT (workspace_id, environment)) > 1) AS batches`,
    );
    assert.ok(Number(spanning!.n) > 0, 'a batch spanned several wallets');
  });

  it('concurrent settles and releases with repeats, an unknown hold and a malformed id: each gets what the single call gives', async () => {
    const account = await createAccount(t);
    const balance = 100_000n;
    await wallet.credit(account.workspaceId, 'live', balance, `gc-${account.workspaceId}`);
    const holdIds = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: 2_000n, subjectType: 'gc-settle', subjectId: String(i) }),
      ),
    );
    // What a single call answers for an unknown hold and a malformed id, alone.
    await assert.rejects(wallet.settle(randomUUID(), 5n), (e: unknown) => e instanceof DomainError && e.status === 404 && e.code === 'not_found');
    const malformedAlone = await wallet.release('not-a-uuid').then(
      () => assert.fail('a malformed hold id resolved'),
      (error: unknown) => error as { code?: string; message: string; constructor: unknown },
    );

    type Call = { kind: 'settle'; hold: number; measured: bigint } | { kind: 'release'; hold: number } | { kind: 'unknown' } | { kind: 'malformed' };
    const calls: Call[] = [];
    holdIds.forEach((_, i) => {
      // below, at, and above the hold (above: the hold is charged, the rest is uncollected).
      const measured = i % 3 === 0 ? 700n : i % 3 === 1 ? 2_000n : 2_000n + 9_000n;
      calls.push(i % 5 === 4 ? { kind: 'release', hold: i } : { kind: 'settle', hold: i, measured });
      if (i % 4 === 0) calls.push({ kind: 'settle', hold: i, measured: 1n }); // repeat, other amount
      if (i % 6 === 0) calls.push({ kind: 'release', hold: i }); // repeat, other kind
      if (i === 7) calls.push({ kind: 'unknown' });
      if (i === 13) calls.push({ kind: 'malformed' });
    });
    // Repeats of early holds at the very end too (another batch than their first resolution).
    calls.push({ kind: 'settle', hold: 0, measured: 99n }, { kind: 'release', hold: 2 });

    // Sequential model of svc_resolve_hold in submission order.
    let modelBalance = balance;
    const state = new Map<number, HoldResolution>();
    const expected = calls.map((call): HoldResolution | 'not_found' | 'malformed' => {
      if (call.kind === 'unknown') return 'not_found';
      if (call.kind === 'malformed') return 'malformed';
      const done = state.get(call.hold);
      if (done) return { ...done, changed: false };
      const measured = call.kind === 'settle' ? call.measured : 0n;
      const charge = min(measured, 2_000n);
      modelBalance -= charge;
      const resolution: HoldResolution = {
        status: call.kind === 'settle' ? 'settled' : 'released',
        amountMicros: 2_000n,
        capturedMicros: charge,
        uncollectedMicros: measured - charge,
        changed: true,
      };
      state.set(call.hold, resolution);
      return resolution;
    });
    const capped = [...state.values()].filter((r) => r.uncollectedMicros > 0n).length;
    assert.ok(capped > 0, `the test covers charges above the hold (${capped})`);

    const before = counters().resolutions;
    const results = await Promise.allSettled(
      calls.map((call) => {
        switch (call.kind) {
          case 'settle':
            return wallet.settle(holdIds[call.hold]!, call.measured);
          case 'release':
            return wallet.release(holdIds[call.hold]!);
          case 'unknown':
            return wallet.release(randomUUID());
          case 'malformed':
            return wallet.settle('not-a-uuid', 10n);
        }
      }),
    );
    const now = counters().resolutions;
    console.log(`group commit, resolutions: ${now.items - before.items} in ${now.calls - before.calls} calls`);
    assert.ok(now.calls - before.calls < calls.length, `batches formed: ${now.calls - before.calls} calls for ${calls.length} resolutions`);

    results.forEach((result, i) => {
      const want = expected[i]!;
      const at = `call ${i} ${JSON.stringify(calls[i], (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`;
      if (want === 'not_found') {
        assert.ok(result.status === 'rejected' && result.reason instanceof DomainError && result.reason.status === 404 && result.reason.code === 'not_found', at);
      } else if (want === 'malformed') {
        assert.equal(result.status, 'rejected', at);
        const reason = (result as PromiseRejectedResult).reason as { code?: string; message: string; constructor: unknown };
        assert.equal(reason.constructor, malformedAlone.constructor, `${at}: same error type as alone`);
        assert.equal(reason.code, malformedAlone.code, `${at}: same SQLSTATE as alone`);
        assert.equal(reason.message, malformedAlone.message, `${at}: same message as alone`);
      } else {
        assert.equal(result.status, 'fulfilled', `${at}: ${result.status === 'rejected' ? String(result.reason) : ''}`);
        assert.deepEqual((result as PromiseFulfilledResult<HoldResolution>).value, want, at);
      }
    });

    const s = await sums(account.workspaceId, 'live');
    assert.equal(s.held, 0n);
    assert.equal(s.openHeld, 0n);
    assert.equal(s.ledgerHeld, 0n);
    assert.equal(s.balance, modelBalance);
    assert.equal(s.ledgerBalance, s.balance);
    assert.ok(s.balance >= 0n);
    // Per hold: the figures of its one resolution, and its entries written once.
    const rows = await t.db.query<{ id: string; status: string; captured: string; uncollected: string; entries: string; adjust: string }>(
      `SELECT h.id, h.status, h.captured_micros::text AS captured, h.uncollected_micros::text AS uncollected,
              (SELECT count(*) FROM ledger_entry l WHERE l.hold_id = h.id)::text AS entries,
              (SELECT coalesce(sum(amount_micros), 0) FROM ledger_entry l WHERE l.hold_id = h.id AND l.kind = 'adjust')::text AS adjust
       FROM hold h WHERE h.workspace_id = $1`,
      [account.workspaceId],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    holdIds.forEach((id, i) => {
      const want = state.get(i)!;
      const row = byId.get(id)!;
      const capture = want.capturedMicros;
      const entryCount = 1 + (capture > 0n ? 1 : 0) + (2_000n - capture > 0n ? 1 : 0);
      assert.deepEqual(
        row,
        {
          id,
          status: want.status,
          captured: String(want.capturedMicros),
          uncollected: String(want.uncollectedMicros),
          entries: String(entryCount),
          adjust: '0',
        },
        `hold ${i}`,
      );
    });
  });

  it('a hold that fails on its data (a NUL byte PostgreSQL refuses in text) in a batch fails alone, with the error it gets alone', async () => {
    const account = await createAccount(t);
    await wallet.credit(account.workspaceId, 'live', 1_000_000n, `gc-${account.workspaceId}`);
    // PostgreSQL refuses a NUL in a text value (SQLSTATE 22021, a data exception): such a subject
    // id fails the whole batch call, and each item is then retried alone.
    const input = (i: number, subjectId = String(i)) => ({
      workspaceId: account.workspaceId,
      environment: 'live' as const,
      apiKeyId: account.keyId,
      amountMicros: 1_000n,
      subjectType: 'gc-bad',
      subjectId,
    });
    const alone = await wallet.hold(input(-1, 'bad\u0000id')).then(
      () => assert.fail('a hold with a NUL in its subject id was made'),
      (error: unknown) => error as { code?: string; message: string; constructor: unknown },
    );
    assert.equal(alone.code, '22021', 'an invalid byte sequence alone');

    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => wallet.hold(input(i, i === 17 ? 'bad\u0000id' : String(i)))));
    results.forEach((r, i) => {
      if (i !== 17) {
        assert.equal(r.status, 'fulfilled', `hold ${i}: ${r.status === 'rejected' ? String(r.reason) : ''}`);
        return;
      }
      assert.equal(r.status, 'rejected');
      const reason = (r as PromiseRejectedResult).reason as { code?: string; message: string; constructor: unknown };
      assert.equal(reason.constructor, alone.constructor);
      assert.equal(reason.code, alone.code);
      assert.equal(reason.message, alone.message);
    });
    const s = await sums(account.workspaceId, 'live');
    assert.equal(s.holdRows, 39);
    assert.equal(s.held, 39_000n);
    assert.equal(s.ledgerHeld, s.held);
    assert.equal(s.ledgerBalance, s.balance);
  });

  it('concurrent text requests over HTTP (sync and streamed): every hold settled on its usage, sums consistent', async () => {
    const account = await createAccount(t, { creditUsd: 50 });
    const client = openaiFor(t, account.key);
    const before = counters();
    const answers = await Promise.all(
      Array.from({ length: 48 }, async (_, i) => {
        const model = 'vendor-3.8-flash';
        if (i % 2 === 0) {
          const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `sync ${i}` }] });
          return textListCost(model, completion.usage!.prompt_tokens, completion.usage!.completion_tokens);
        }
        const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `stream ${i}` }], stream: true, stream_options: { include_usage: true } });
        let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
        for await (const chunk of stream) usage = chunk.usage ?? usage;
        return textListCost(model, usage!.prompt_tokens, usage!.completion_tokens);
      }),
    );
    const now = counters();
    console.log(
      `group commit, HTTP text: holds ${now.holds.items - before.holds.items} in ${now.holds.calls - before.holds.calls} calls, ` +
        `settlements ${now.resolutions.items - before.resolutions.items} in ${now.resolutions.calls - before.resolutions.calls} calls`,
    );
    const holds = await textHolds(t, account.workspaceId);
    assert.equal(holds.length, 48);
    for (const hold of holds) assert.equal(hold.status, 'settled');
    const charged = holds.reduce((sum, hold) => sum + BigInt(hold.captured_micros), 0n);
    assert.equal(charged, answers.reduce((sum, cost) => sum + cost, 0n), 'charged exactly the reported usage');
    const s = await sums(account.workspaceId, 'live');
    assert.equal(s.held, 0n);
    assert.equal(s.balance, 50_000_000n - charged);
    assert.equal(s.ledgerBalance, s.balance);
    assert.equal(s.ledgerHeld, 0n);
  });

  it('svc_resolve_many gives exactly what svc_resolve_hold gives item by item: set-based batches and the fallback', async () => {
    /** Two wallets with the same holds; A resolves in one batch call, B one call per item in the same order. */
    async function twins(amounts: bigint[]) {
      const pair = [];
      for (const side of ['A', 'B']) {
        const account = await createAccount(t);
        await wallet.credit(account.workspaceId, 'live', 1_000_000n, `twin-${side}-${account.workspaceId}`);
        const ids: string[] = [];
        for (const [i, amount] of amounts.entries()) {
          ids.push(await wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: amount, subjectType: 'twin', subjectId: String(i) }));
        }
        pair.push({ account, ids });
      }
      return pair as [{ account: TestAccount; ids: string[] }, { account: TestAccount; ids: string[] }];
    }
    /** What a wallet, its holds and its ledger look like, with hold ids replaced by their index. */
    async function picture(account: TestAccount, ids: string[]) {
      const index = (id: string) => ids.indexOf(id);
      const [w] = await t.db.query<Record<string, string>>(`SELECT balance_micros::text AS b, held_micros::text AS h, version::text AS v FROM wallet WHERE workspace_id = $1`, [account.workspaceId]);
      const holds = await t.db.query<Record<string, string>>(
        `SELECT id, status, captured_micros::text AS c, uncollected_micros::text AS u, resolved_at IS NOT NULL AS r FROM hold WHERE workspace_id = $1`,
        [account.workspaceId],
      );
      const ledger = await t.db.query<Record<string, string>>(
        `SELECT kind, amount_micros::text AS a, balance_delta_micros::text AS bd, held_delta_micros::text AS hd, hold_id FROM ledger_entry WHERE workspace_id = $1 AND kind <> 'credit' ORDER BY id`,
        [account.workspaceId],
      );
      return {
        wallet: w,
        holds: holds.map((h) => ({ ...h, id: index(h.id) })).sort((a, b) => a.id - b.id),
        ledger: ledger.map((e) => ({ ...e, hold_id: index(e.hold_id) })),
      };
    }
    const unknown = randomUUID();
    const run = async (amounts: bigint[], pre: Array<[number, bigint]>, items: Array<[number | 'unknown', bigint, 'settled' | 'released']>) => {
      const [a, b] = await twins(amounts);
      for (const side of [a, b]) for (const [i, measured] of pre) await wallet.settle(side.ids[i]!, measured); // resolved before the batch
      const idOf = (side: { ids: string[] }, i: number | 'unknown') => (i === 'unknown' ? unknown : side.ids[i]!);
      const batched = await t.db.query<Record<string, unknown>>(`SELECT * FROM svc_resolve_many($1::uuid[], $2::bigint[], $3::text[])`, [
        items.map(([i]) => idOf(a, i)),
        items.map(([, m]) => m.toString()),
        items.map(([, , st]) => st),
      ]);
      const single = [];
      for (const [k, [i, m, st]] of items.entries()) {
        const [row] = await t.db.query<Record<string, unknown>>(`SELECT * FROM svc_resolve_hold($1, $2, $3)`, [idOf(b, i), m.toString(), st]);
        single.push(row ? { idx: k + 1, known: true, ...row } : { idx: k + 1, known: false, status: null, amount_micros: null, captured_micros: null, uncollected_micros: null, changed: false });
      }
      assert.deepEqual(batched, single, 'the answers');
      assert.deepEqual(await picture(a.account, a.ids), await picture(b.account, b.ids), 'wallet, holds and ledger');
      return batched;
    };

    // Set-based: every charge within its hold (zero, part, all), releases, an unknown id and holds resolved before.
    const amounts = Array.from({ length: 14 }, (_, i) => 1_000n + 250n * BigInt(i));
    const rows = await run(amounts, [[12, 300n], [13, 9_999_999n]], [
      ...amounts.slice(0, 12).map((amount, i): [number, bigint, 'settled' | 'released'] => (i % 4 === 3 ? [i, 0n, 'released'] : [i, [0n, amount / 3n, amount][i % 3]!, 'settled'])),
      ['unknown', 5n, 'settled'],
      [12, 1n, 'settled'],
      [13, 0n, 'released'],
    ]);
    assert.equal(rows.filter((r) => r.changed).length, 12);
    // Fallback: a charge above its hold (capped by what is available after the items before it) and a repeated id.
    await run(amounts.slice(0, 6), [], [
      [0, 500n, 'settled'],
      [1, 5_000_000n, 'settled'],
      [2, 100n, 'settled'],
      [0, 7n, 'released'],
      [3, 0n, 'released'],
    ]);
  });

  it('the set-based resolutions migration goes down (item by item) and up again', async () => {
    const migration = new SetBasedResolutions1763800000500();
    const runner = { query: (sql: string) => t.db.query(sql) } as unknown as QueryRunner;
    const source = async () => (await t.db.query<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE proname = 'svc_resolve_many'`))[0]!.src;
    assert.match(await source(), /WITH req AS/);
    await migration.down(runner);
    assert.doesNotMatch(await source(), /WITH req AS/);
    await migration.up(runner);
    assert.match(await source(), /WITH req AS/);
  });

  it('the migration goes down (functions gone) and up again (batches work)', async () => {
    const migration = new WalletBatch1763800000200();
    const runner = { query: (sql: string) => t.db.query(sql) } as unknown as QueryRunner;
    const functions = async () =>
      (await t.db.query<{ proname: string }>(`SELECT proname FROM pg_proc WHERE proname IN ('svc_hold_many', 'svc_resolve_many') ORDER BY proname`)).map((r) => r.proname);
    assert.deepEqual(await functions(), ['svc_hold_many', 'svc_resolve_many']);
    await migration.down(runner);
    assert.deepEqual(await functions(), []);
    const [{ single }] = await t.db.query<{ single: string }>(`SELECT count(*)::text AS single FROM pg_proc WHERE proname = 'svc_resolve_hold'`);
    assert.equal(single, '1', 'down leaves the platform functions alone');
    await migration.up(runner);
    assert.deepEqual(await functions(), ['svc_hold_many', 'svc_resolve_many']);

    const account = await createAccount(t);
    await wallet.credit(account.workspaceId, 'live', 10_000n, `gc-${account.workspaceId}`);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: null, amountMicros: 1_000n, subjectType: 'gc-again', subjectId: String(i) }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 10);
    const ids = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const resolutions = await Promise.all(ids.map((id) => wallet.settle(id, 500n)));
    assert.ok(resolutions.every((r) => r.changed && r.capturedMicros === 500n));
    const s = await sums(account.workspaceId, 'live');
    assert.deepEqual([s.balance, s.held, s.ledgerBalance, s.ledgerHeld], [5_000n, 0n, 5_000n, 0n]);
  });
});
