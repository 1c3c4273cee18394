/**
 * Attack (issue 9 §1b): make the upstream report far more usage than the request's hold was
 * sized for. Before: the charge was capped only at hold + available balance, so a 0.0002 USD
 * hold took a whole 5 USD wallet (and recorded the rest as uncollected). Now the charge never
 * exceeds the hold, for any caller of the wallet: the excess is logged and counted
 * (svc_wallet_charges_capped_total), never taken from the rest of the wallet.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { textListCost } from '../support/list-prices.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import { createAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from '../text/text-helpers.js';

const USD = 1_000_000n;

async function ledgerKinds(t: TestApp, workspaceId: string): Promise<Record<string, bigint>> {
  const rows = await t.db.query<{ kind: string; sum: string }>(
    `SELECT kind, sum(amount_micros)::text AS sum FROM ledger_entry WHERE workspace_id = $1 GROUP BY kind`,
    [workspaceId],
  );
  return Object.fromEntries(rows.map((r) => [r.kind, BigInt(r.sum)]));
}

async function metric(t: TestApp, name: string): Promise<number> {
  const text = await (await t.request('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('reliability: a charge never exceeds its hold', () => {
  let fake: FakeGeminiServer;
  let t: TestApp;

  before(async () => {
    fake = await new FakeGeminiServer().start();
    t = await bootTestApp({ label: 'charge-cap', env: { GEMINI_API_KEY: 'fake-gemini-key', GEMINI_BASE_URL: fake.url } });
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  for (const stream of [false, true]) {
    it(`an upstream reporting 50,000x the output cap is charged the hold, not the wallet (${stream ? 'stream' : 'sync'})`, async () => {
      const account = await createAccount(t, { creditUsd: 5 });
      const client = openaiFor(t, account.key);
      const runaway = { promptTokenCount: 3, candidatesTokenCount: 2_500_000, thoughtsTokenCount: 0, totalTokenCount: 2_500_003 };
      fake.next({ kind: 'answer', parts: [{ text: 'a runaway answer' }], usage: runaway });
      const request = { model: 'vendor-3.8-flash', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 50 };
      if (stream) {
        for await (const _ of await client.chat.completions.create({ ...request, stream: true })) void _;
      } else {
        await client.chat.completions.create(request);
      }

      const [hold] = await textHolds(t, account.workspaceId);
      const heldMicros = BigInt(hold!.amount_micros);
      assert.equal(hold!.status, 'settled');
      // The output is billed at most at the request's own cap: here the hold covers all of it.
      assert.ok(BigInt(hold!.captured_micros) <= heldMicros, `captured ${hold!.captured_micros} > hold ${heldMicros}`);
      assert.ok(heldMicros < USD / 100n, `a small request holds little (${heldMicros} micro-USD)`);
      const wallet = await walletRow(t, account.workspaceId);
      assert.equal(wallet.held, 0n);
      assert.equal(wallet.balance, 5n * USD - BigInt(hold!.captured_micros), 'nothing taken beyond the capture');
      const kinds = await ledgerKinds(t, account.workspaceId);
      assert.equal(kinds.adjust, undefined, 'no adjust entry');
    });
  }

  it('any caller (video, audio, …): settling above the hold charges the hold, records the excess as uncollected, counts it', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const wallet = t.app.get(WalletService);
    const cappedBefore = await metric(t, 'svc_wallet_charges_capped_total');
    const holdId = await wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: 159n, subjectType: 'attack', subjectId: 'runaway' });
    const measured = textListCost('vendor-3.8-flash', 3, 2_500_000);
    assert.ok(measured > 5n * USD, 'the measured cost is above the whole balance');

    const resolution = await wallet.settle(holdId, measured);
    assert.deepEqual(resolution, { status: 'settled', amountMicros: 159n, capturedMicros: 159n, uncollectedMicros: measured - 159n, changed: true });
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 5n * USD - 159n, held: 0n });
    assert.deepEqual(await ledgerKinds(t, account.workspaceId), { credit: 5n * USD, hold: 159n, capture: 159n });
    assert.equal(await metric(t, 'svc_wallet_charges_capped_total'), cappedBefore + 1);
    // Settling again changes nothing (and is not counted again).
    assert.equal((await wallet.settle(holdId, measured)).changed, false);
    assert.equal(await metric(t, 'svc_wallet_charges_capped_total'), cappedBefore + 1);
  });
});
