import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { DomainError, microsToUsd } from '../../libs/common/index.js';
import { PriceCatalogue } from '../../src/modules/billing/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { TaskCreations } from '../../src/queue/task-creations.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { SAMPLE_OWNED_TABLE_SQL, SampleOwnedModule } from './sample-owned.module.js';

const HOLD_MICROS = 1_000n;
const AFFORDABLE = 50;
const ATTEMPTS = 200;

interface WalletState {
  balance: bigint;
  held: bigint;
  ledgerBalance: bigint;
  ledgerHeld: bigint;
  openHolds: number;
  openHeld: bigint;
  holdEntries: number;
}

describe('overspend race: 200 concurrent holds (and creations) on a wallet that affords 50', () => {
  let t: TestApp;
  let wallet: WalletService;

  before(async () => {
    t = await bootTestApp({ label: 'overspend', imports: [SampleOwnedModule] });
    await t.db.query(SAMPLE_OWNED_TABLE_SQL);
    wallet = t.app.get(WalletService);
  });
  after(async () => {
    await t.close();
  });

  /** A workspace whose live wallet holds exactly AFFORDABLE × HOLD_MICROS. */
  async function affordingFifty(): Promise<TestAccount> {
    const account = await createAccount(t);
    await wallet.credit(account.workspaceId, 'live', HOLD_MICROS * BigInt(AFFORDABLE), `race-${account.workspaceId}`);
    return account;
  }

  async function state(workspaceId: string): Promise<WalletState> {
    const [row] = await t.db.query<Record<string, string>>(
      `SELECT w.balance_micros, w.held_micros,
              (SELECT sum(balance_delta_micros) FROM ledger_entry WHERE workspace_id = $1) AS ledger_balance,
              (SELECT sum(held_delta_micros) FROM ledger_entry WHERE workspace_id = $1) AS ledger_held,
              (SELECT count(*) FROM hold WHERE workspace_id = $1 AND status = 'open') AS open_holds,
              (SELECT coalesce(sum(amount_micros), 0) FROM hold WHERE workspace_id = $1 AND status = 'open') AS open_held,
              (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1 AND kind = 'hold') AS hold_entries
       FROM wallet w WHERE w.workspace_id = $1 AND w.environment = 'live'`,
      [workspaceId],
    );
    assert.ok(row);
    return {
      balance: BigInt(row.balance_micros!),
      held: BigInt(row.held_micros!),
      ledgerBalance: BigInt(row.ledger_balance!),
      ledgerHeld: BigInt(row.ledger_held!),
      openHolds: Number(row.open_holds),
      openHeld: BigInt(row.open_held!),
      holdEntries: Number(row.hold_entries),
    };
  }

  function assertFullyHeld(s: WalletState): void {
    const total = HOLD_MICROS * BigInt(AFFORDABLE);
    assert.deepEqual(s, {
      balance: total,
      held: total,
      ledgerBalance: total,
      ledgerHeld: total,
      openHolds: AFFORDABLE,
      openHeld: total,
      holdEntries: AFFORDABLE,
    });
    assert.ok(s.balance - s.held >= 0n);
  }

  it('through WalletService: exactly 50 accepted, 150 refused with 402 insufficient_balance', async () => {
    const account = await affordingFifty();
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: ATTEMPTS }, (_, i) =>
        wallet.hold({
          workspaceId: account.workspaceId,
          environment: 'live',
          apiKeyId: account.keyId,
          amountMicros: HOLD_MICROS,
          subjectType: 'race',
          subjectId: String(i),
        }),
      ),
    );
    const elapsedMs = performance.now() - started;
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    console.log(`overspend race (service): ${accepted.length} accepted, ${refused.length} refused of ${ATTEMPTS} in ${elapsedMs.toFixed(0)} ms`);

    assert.equal(accepted.length, AFFORDABLE);
    assert.equal(refused.length, ATTEMPTS - AFFORDABLE);
    for (const { reason } of refused) {
      assert.ok(reason instanceof DomainError, String(reason));
      assert.equal(reason.status, 402);
      assert.equal(reason.code, 'insufficient_balance');
    }
    assert.equal(new Set(accepted.map((r) => r.value)).size, AFFORDABLE, 'every accepted hold has its own id');
    assertFullyHeld(await state(account.workspaceId));
    assert.deepEqual(await wallet.figures(account.workspaceId, 'live'), { balanceUsd: 0.05, heldUsd: 0.05, availableUsd: 0 });
  });

  it('over HTTP (hold and row in one transaction): exactly 50 × 200, 150 × 402, no row without its hold', async () => {
    const account = await affordingFifty();
    const started = performance.now();
    const responses = await Promise.all(
      Array.from({ length: ATTEMPTS }, async (_, i) => {
        const response = await t.request('/api/svc/v1/test-owned', {
          method: 'POST',
          key: account.key,
          json: { label: `race ${i}`, costMicros: Number(HOLD_MICROS) },
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    const elapsedMs = performance.now() - started;
    const accepted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    console.log(`overspend race (HTTP): ${accepted.length} accepted, ${refused.length} refused of ${ATTEMPTS} in ${elapsedMs.toFixed(0)} ms`);

    assert.equal(accepted.length, AFFORDABLE);
    assert.equal(refused.length, ATTEMPTS - AFFORDABLE, `statuses: ${JSON.stringify(responses.map((r) => r.status))}`);
    for (const { body } of refused) {
      const error = (body as { error: { code: string; message: string } }).error;
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(error.code, 'request.insufficient_balance');
      assert.match(error.message, /insufficient balance/);
    }
    assertFullyHeld(await state(account.workspaceId));
    // Each accepted row points at its own open hold, and no hold exists without its row.
    const [{ rows, matched }] = await t.db.query<{ rows: string; matched: string }>(
      `SELECT (SELECT count(*) FROM test_owned WHERE workspace_id = $1) AS rows,
              (SELECT count(*) FROM test_owned o JOIN hold h ON h.id = o.hold_id AND h.subject_id = o.id::text AND h.status = 'open'
                WHERE o.workspace_id = $1) AS matched`,
      [account.workspaceId],
    );
    assert.equal(Number(rows), AFFORDABLE);
    assert.equal(Number(matched), AFFORDABLE);
  });

  it('200 concurrent video creations over HTTP on a wallet that affords 50: exactly 50 created, in transactions of several creations', async () => {
    const account = await createAccount(t, { environment: 'test' });
    const body = { model: 'vendor-omni-1.1-flash-preview' as const, prompt: 'overspend race', controls: { duration: 3, resolution: '720p' } };
    const price = t.app
      .get(PriceCatalogue)
      .videoMaxCost({ workspaceId: account.workspaceId, apiKeyId: account.keyId, environment: 'test' }, body.model, '720p');
    await wallet.credit(account.workspaceId, 'test', price * BigInt(AFFORDABLE), `race-video-${account.workspaceId}`);
    const before = t.app.get(TaskCreations).counters();
    const statuses = await Promise.all(
      Array.from({ length: ATTEMPTS }, async () => {
        const response = await t.request('/v1/contents/generations/tasks', { method: 'POST', key: account.key, json: body });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const now = t.app.get(TaskCreations).counters();
    console.log(`overspend race (video creations): ${now.items - before.items} creations in ${now.calls - before.calls} transactions (largest ${now.largest})`);
    assert.equal(statuses.filter((s) => s === 200).length, AFFORDABLE);
    assert.equal(statuses.filter((s) => s === 402).length, ATTEMPTS - AFFORDABLE);
    assert.deepEqual(await wallet.figures(account.workspaceId, 'test'), {
      balanceUsd: microsToUsd(price * BigInt(AFFORDABLE)),
      heldUsd: microsToUsd(price * BigInt(AFFORDABLE)),
      availableUsd: 0,
    });
    const [row] = await t.db.query<{ tasks: string; matched: string; shared: string }>(
      `SELECT (SELECT count(*) FROM video_task WHERE workspace_id = $1) AS tasks,
              (SELECT count(*) FROM video_task v JOIN hold h ON h.id = v.hold_id AND h.subject_id = v.id AND h.status = 'open' WHERE v.workspace_id = $1) AS matched,
              (SELECT count(*) FROM (SELECT created_at FROM hold WHERE workspace_id = $1 GROUP BY created_at HAVING count(*) > 1) AS batches) AS shared`,
      [account.workspaceId],
    );
    assert.equal(Number(row!.tasks), AFFORDABLE);
    assert.equal(Number(row!.matched), AFFORDABLE, 'every task has its own open hold, and no hold is without its task');
    // A transaction's holds share its now(): some transaction carried several creations.
    assert.ok(Number(row!.shared) > 0, 'batches happened: several creations in one transaction');
    assert.ok(now.calls - before.calls < now.items - before.items);
  });

  it('concurrent settles and releases of one hold: exactly one resolves it', async () => {
    const account = await affordingFifty();
    const holdId = await wallet.hold({
      workspaceId: account.workspaceId,
      environment: 'live',
      apiKeyId: account.keyId,
      amountMicros: 10_000n,
      subjectType: 'race',
      subjectId: 'one',
    });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? wallet.settle(holdId, BigInt(1_000 + i)) : wallet.release(holdId))),
    );
    const winners = results.filter((r) => r.changed);
    assert.equal(winners.length, 1);
    const winner = winners[0]!;
    for (const r of results) {
      assert.deepEqual({ ...r, changed: true }, winner, 'every caller sees the one resolution');
    }
    const s = await state(account.workspaceId);
    assert.equal(s.openHolds, 0);
    assert.equal(s.held, 0n);
    assert.equal(s.ledgerHeld, 0n);
    assert.equal(s.balance, 50_000n - winner.capturedMicros);
    assert.equal(s.ledgerBalance, s.balance);
    const [entries] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM ledger_entry WHERE hold_id = $1 AND kind <> 'hold'`, [holdId]);
    assert.equal(Number(entries!.n), winner.status === 'released' ? 1 : 2, 'one resolution written, never two');
  });

  it('the database itself refuses a wallet row whose held exceeds its balance', async () => {
    const account = await affordingFifty();
    await assert.rejects(
      t.db.query(`UPDATE wallet SET held_micros = balance_micros + 1 WHERE workspace_id = $1`, [account.workspaceId]),
      /wallet_available_not_negative/,
    );
    await assert.rejects(t.db.query(`UPDATE wallet SET balance_micros = -1 WHERE workspace_id = $1`, [account.workspaceId]), /wallet_available_not_negative/);
  });

  it('concurrent credits with one reference: applied once', async () => {
    const account = await createAccount(t);
    const reference = `topup-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 30 }, () => wallet.credit(account.workspaceId, 'live', 7_000n, reference)));
    assert.equal(results.filter((r) => r.applied).length, 1);
    const [row] = await t.db.query<{ balance: string; ledger: string; entries: string }>(
      `SELECT w.balance_micros AS balance,
              (SELECT sum(balance_delta_micros) FROM ledger_entry WHERE workspace_id = $1) AS ledger,
              (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1 AND kind = 'credit') AS entries
       FROM wallet w WHERE w.workspace_id = $1 AND w.environment = 'live'`,
      [account.workspaceId],
    );
    assert.deepEqual(row, { balance: '7000', ledger: '7000', entries: '1' });
  });
});
