/**
 * Holds made on the pool commit asynchronously (issue 17, decision 2): a database crash can lose
 * a hold whose request has not settled yet. The crash is played by deleting the hold's whole
 * transaction — its row, its `hold` entry and the wallet's `held` increment, as WAL replay would
 * leave them — before the settlement. A settlement of such a hold charges the measured amount
 * directly (capped at the hold and at the available balance) with one `adjust` entry, exactly
 * once; a release charges nothing; the ledger sums, the open-hold sweeper and the reconciler stay
 * as they were.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ManualClock, usdToMicros } from '../../libs/common/index.js';
import { entityManagerOf, inTransaction, type TransactionHandle } from '../../src/database/transaction.js';
import { JOURNAL_REPLAY_MIN_AGE_MS, SettlementJournal } from '../../src/modules/billing/settlement-journal.js';
import { HOLD, HOLD_MANY, type HoldInput } from '../../src/modules/billing/wallet.repository.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { WorkReconciler } from '../../src/queue/work-reconciler.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { loseHold as loseHoldIn } from '../support/lost-hold.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor } from '../text/text-helpers.js';

interface Entry {
  kind: string;
  amount: string;
  b: string;
  h: string;
}

describe('lost holds: asynchronous hold commits, settled safely after a crash lost them', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let wallet: WalletService;

  before(async () => {
    t = await bootTestApp({ label: 'lostholds', clock });
    wallet = t.app.get(WalletService);
  });
  after(async () => {
    await t.close();
  });

  const inputFor = (account: TestAccount, amountUsd: number, subjectType = 'text'): HoldInput => ({
    workspaceId: account.workspaceId,
    environment: 'live',
    apiKeyId: account.keyId,
    amountMicros: usdToMicros(amountUsd),
    subjectType,
    subjectId: `subject-${randomUUID()}`,
  });

  const loseHold = (holdId: string) => loseHoldIn(t.db, holdId);

  async function entriesOf(holdId: string): Promise<Entry[]> {
    return t.db.query<Entry>(
      `SELECT kind, amount_micros::text AS amount, balance_delta_micros::text AS b, held_delta_micros::text AS h FROM ledger_entry WHERE hold_id = $1 ORDER BY id`,
      [holdId],
    );
  }

  /** Balance and held, and the invariants the ledger keeps: sums of entries, sum of open holds, available ≥ 0. */
  async function checkedWallet(account: TestAccount): Promise<{ balance: bigint; held: bigint }> {
    const [row] = await t.db.query<{ balance: string; held: string; ledger_balance: string; ledger_held: string; open_held: string }>(
      `SELECT w.balance_micros::text AS balance, w.held_micros::text AS held,
              (SELECT coalesce(sum(balance_delta_micros), 0) FROM ledger_entry l WHERE l.workspace_id = w.workspace_id AND l.environment = w.environment)::text AS ledger_balance,
              (SELECT coalesce(sum(held_delta_micros), 0) FROM ledger_entry l WHERE l.workspace_id = w.workspace_id AND l.environment = w.environment)::text AS ledger_held,
              (SELECT coalesce(sum(amount_micros), 0) FROM hold h WHERE h.workspace_id = w.workspace_id AND h.environment = w.environment AND h.status = 'open')::text AS open_held
         FROM wallet w WHERE w.workspace_id = $1 AND w.environment = 'live'`,
      [account.workspaceId],
    );
    const balance = BigInt(row!.balance);
    const held = BigInt(row!.held);
    assert.equal(BigInt(row!.ledger_balance), balance, 'balance = sum of balance deltas');
    assert.equal(BigInt(row!.ledger_held), held, 'held = sum of held deltas');
    assert.equal(BigInt(row!.open_held), held, 'held = sum of open holds');
    assert.ok(balance - held >= 0n, 'available never negative');
    return { balance, held };
  }

  const scrape = async () => (await t.request('/metrics')).text();
  const lostCharged = (text: string) => metricSample(text, 'svc_wallet_lost_holds_charged_total') ?? 0;
  const captured = (text: string, kind: string) => metricSample(text, 'svc_money_captured_micros_total', `{kind="${kind}"}`) ?? 0;

  it('pool holds run with synchronous_commit off, settlements and holds inside a caller transaction stay durable', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    const show = async () => (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
    try {
      const ws = account.workspaceId;
      await client.query('BEGIN');
      const one = await client.query(HOLD.text, [ws, 'live', '1000', randomUUID(), account.keyId, 'text', 'one']);
      assert.equal(one.rowCount, 1, 'the hold was made');
      assert.equal(await show(), 'off', 'the single hold statement');
      await client.query('ROLLBACK');

      await client.query('BEGIN');
      const many = await client.query(HOLD_MANY.text, [[randomUUID(), randomUUID()], [ws, ws], ['live', 'live'], [null, null], ['1000', '2000'], ['text', 'text'], ['a', 'b']]);
      assert.equal(many.rows.filter((row: { hold_id: string | null }) => row.hold_id !== null).length, 2, 'both holds were made');
      assert.equal(await show(), 'off', 'the batched hold call');
      await client.query('ROLLBACK');

      // Only that transaction: the connection's next one commits durably again.
      await client.query('BEGIN');
      await client.query('SELECT * FROM svc_resolve_hold($1, 0, $2)', [randomUUID(), 'released']);
      assert.equal(await show(), 'on', 'a resolution');
      await client.query('ROLLBACK');
    } finally {
      await client.end();
    }

    // Holds inside a task-creation transaction (one alone, or a batch's) commit as that transaction
    // does: durably, since a creation answers only once its row is durable.
    const settingAfter = (holds: (tx: TransactionHandle) => Promise<unknown>) =>
      inTransaction(t.app.get(DataSource), async (tx) => {
        await holds(tx);
        const rows: Array<{ synchronous_commit: string }> = await entityManagerOf(tx).query('SHOW synchronous_commit');
        return rows[0]!.synchronous_commit;
      });
    assert.equal(await settingAfter((tx) => wallet.hold(inputFor(account, 0.01, 'video'), tx)), 'on', 'a hold in the transaction');
    let made: Array<string | Error> = [];
    assert.equal(await settingAfter(async (tx) => (made = await wallet.holdEach([inputFor(account, 0.01, 'video'), inputFor(account, 0.02, 'audio')], tx))), 'on', "a batch's holds");
    assert.equal(made.filter((hold) => typeof hold === 'string').length, 2, 'both holds were made');
  });

  it('a settlement whose hold is missing charges the measured amount once, with one adjust entry', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const input = inputFor(account, 0.5);
    const holdId = await wallet.hold(input);
    await loseHold(holdId);
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(1), held: 0n });
    const before = await scrape();

    const measured = usdToMicros(0.2);
    assert.deepEqual(await wallet.settle(holdId, measured, 'charge', input), {
      status: 'settled',
      amountMicros: input.amountMicros,
      capturedMicros: measured,
      uncollectedMicros: 0n,
      changed: true,
    });
    assert.deepEqual(await entriesOf(holdId), [{ kind: 'adjust', amount: String(measured), b: String(-measured), h: '0' }]);
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.8), held: 0n });
    const [hold] = await wallet.holds([holdId]);
    assert.equal(hold!.status, 'settled');
    assert.equal(hold!.capturedMicros, measured);
    assert.equal(hold!.subjectId, input.subjectId);
    assert.ok(hold!.resolvedAt, 'written back resolved');

    const afterFirst = await scrape();
    assert.equal(lostCharged(afterFirst) - lostCharged(before), 1, 'counted once');
    assert.equal(captured(afterFirst, 'text') - captured(before, 'text'), Number(measured), 'captured money counted under its kind');

    // A second settlement, a release, or a settlement without the input: no second charge.
    for (const again of [() => wallet.settle(holdId, measured, 'charge', input), () => wallet.settle(holdId, usdToMicros(0.4)), () => wallet.release(holdId, input)]) {
      assert.deepEqual(await again(), { status: 'settled', amountMicros: input.amountMicros, capturedMicros: measured, uncollectedMicros: 0n, changed: false });
    }
    assert.equal((await entriesOf(holdId)).length, 1, 'still one entry');
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.8), held: 0n });
    assert.equal(lostCharged(await scrape()), lostCharged(afterFirst), 'repeats are not counted');
  });

  it('caps the charge of a lost hold at the hold and at the available balance', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const above = inputFor(account, 0.1);
    const aboveId = await wallet.hold(above);
    await loseHold(aboveId);
    const result = await wallet.settle(aboveId, usdToMicros(0.3), 'charge', above);
    assert.equal(result.capturedMicros, usdToMicros(0.1), 'never more than the hold');
    assert.equal(result.uncollectedMicros, usdToMicros(0.2));
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.9), held: 0n });

    // The lost hold no longer reserved anything: holds made since may have taken the money.
    const lost = inputFor(account, 0.5);
    const lostId = await wallet.hold(lost);
    await loseHold(lostId);
    const other = await wallet.hold(inputFor(account, 0.8));
    const capped = await wallet.settle(lostId, usdToMicros(0.4), 'charge', lost);
    assert.equal(capped.capturedMicros, usdToMicros(0.1), 'only what is available');
    assert.equal(capped.uncollectedMicros, usdToMicros(0.3));
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.8), held: usdToMicros(0.8) });
    // The open hold is intact and settles as usual.
    assert.equal((await wallet.settle(other, usdToMicros(0.8))).capturedMicros, usdToMicros(0.8));
    assert.deepEqual(await checkedWallet(account), { balance: 0n, held: 0n });
  });

  it('a release of a lost hold charges nothing, and a later settlement of it changes nothing', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const input = inputFor(account, 0.3);
    const holdId = await wallet.hold(input);
    await loseHold(holdId);
    assert.deepEqual(await wallet.release(holdId, input), { status: 'released', amountMicros: input.amountMicros, capturedMicros: 0n, uncollectedMicros: 0n, changed: true });
    assert.deepEqual(await entriesOf(holdId), []);
    assert.deepEqual(await wallet.settle(holdId, usdToMicros(0.1), 'charge', input), {
      status: 'released',
      amountMicros: input.amountMicros,
      capturedMicros: 0n,
      uncollectedMicros: 0n,
      changed: false,
    });
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(1), held: 0n });
  });

  it('without the hold input a missing hold is still 404, and a hold that exists ignores the input', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const input = inputFor(account, 0.3);
    const holdId = await wallet.hold(input);
    await loseHold(holdId);
    await assert.rejects(wallet.settle(holdId, 1n), (error: { status?: number }) => error.status === 404);
    await assert.rejects(wallet.release(holdId), (error: { status?: number }) => error.status === 404);

    const kept = await wallet.hold(input);
    assert.equal((await wallet.settle(kept, usdToMicros(0.1), 'charge', input)).capturedMicros, usdToMicros(0.1));
    assert.deepEqual((await entriesOf(kept)).map((entry) => entry.kind), ['hold', 'capture', 'release'], 'the usual entries, no adjust');
  });

  it('two settlements of the same lost hold racing each other charge it once', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const input = inputFor(account, 0.5);
    const holdId = await wallet.hold(input);
    await loseHold(holdId);
    const results = await Promise.all([1, 2, 3].map(() => wallet.settle(holdId, usdToMicros(0.25), 'charge', input)));
    assert.equal(results.filter((result) => result.changed).length, 1, 'one of them changed it');
    assert.ok(results.every((result) => result.capturedMicros === usdToMicros(0.25)), 'all see the one charge');
    assert.equal((await entriesOf(holdId)).length, 1);
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.75), held: 0n });
  });

  it('the settlement journal carries the hold input: a replay after a crash charges a lost hold', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const input = inputFor(account, 0.5);
    const holdId = await wallet.hold(input);
    await loseHold(holdId);
    // What a settlement that lost its connection leaves in the journal.
    assert.equal(await t.app.get(SettlementJournal).record({ holdId, status: 'settled', measuredMicros: usdToMicros(0.3), heldFor: input }), true);
    clock.advance(JOURNAL_REPLAY_MIN_AGE_MS + 1_000);
    assert.equal(await wallet.replayJournal(), 1);
    assert.deepEqual(await entriesOf(holdId), [{ kind: 'adjust', amount: String(usdToMicros(0.3)), b: String(-usdToMicros(0.3)), h: '0' }]);
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.7), held: 0n });
    assert.equal(await wallet.replayJournal(), 0, 'the entry is gone');
  });

  it('the open-hold sweeper and the reconciler do not trip over lost or rewritten holds', async () => {
    const account = await createAccount(t, { creditUsd: 1 });
    const settledInput = inputFor(account, 0.2);
    const settledId = await wallet.hold(settledInput);
    await loseHold(settledId);
    await wallet.settle(settledId, usdToMicros(0.1), 'charge', settledInput);
    const neverSettled = await wallet.hold(inputFor(account, 0.2));
    await loseHold(neverSettled); // a request that died with the database: nothing of it is left
    const open = await wallet.hold(inputFor(account, 0.3));

    // Every hold older than a minute from now is "abandoned": only the one open hold is there to release.
    const released = await wallet.releaseAbandoned('text', new Date(Date.now() + 60_000));
    assert.ok(released >= 1);
    const [openHold, settledHold] = await wallet.holds([open, settledId]).then((rows) => [rows.find((h) => h.id === open), rows.find((h) => h.id === settledId)]);
    assert.equal(openHold!.status, 'released');
    assert.equal(settledHold!.status, 'settled');
    assert.equal(settledHold!.capturedMicros, usdToMicros(0.1), 'untouched by the sweep');
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.9), held: 0n });
    await t.app.get(WorkReconciler).reconcile();
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(0.9), held: 0n });
  });

  it('a text stream whose hold is lost mid-answer is charged directly for what it sent', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const client = openaiFor(t, account.key);
    const stream = await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: 'a long story please [sandbox:delay=150]' }],
      stream: true,
    });
    let lost = false;
    for await (const chunk of stream) {
      if (!lost && chunk.choices[0]?.delta.content) {
        // The crash happens while the answer streams: its hold is gone before the settlement.
        const [hold] = await t.db.query<{ id: string }>(`SELECT id FROM hold WHERE workspace_id = $1 AND status = 'open'`, [account.workspaceId]);
        await loseHold(hold!.id);
        lost = true;
      }
    }
    assert.ok(lost);
    const [hold] = await eventually(
      () => t.db.query<{ id: string; status: string; captured: string; amount: string }>(
        `SELECT id, status, captured_micros::text AS captured, amount_micros::text AS amount FROM hold WHERE workspace_id = $1`,
        [account.workspaceId],
      ),
      (rows) => rows.length === 1 && rows[0]!.status === 'settled',
      'the lost hold written back settled',
      10_000,
    );
    const charged = BigInt(hold!.captured);
    assert.ok(charged > 0n && charged <= BigInt(hold!.amount), 'charged within the hold');
    assert.deepEqual(await entriesOf(hold!.id), [{ kind: 'adjust', amount: String(charged), b: String(-charged), h: '0' }]);
    assert.deepEqual(await checkedWallet(account), { balance: usdToMicros(5) - charged, held: 0n });
  });
});
