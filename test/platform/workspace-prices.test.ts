/**
 * Seam: prices are a service. WorkspacePricesModule overrides the PriceCatalogue with a subclass
 * that charges one workspace twice the list price; the text and video flows hold and charge
 * through the injected catalogue, so that workspace pays double and another pays list price,
 * with no edit to a core file.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PriceCatalogue } from '../../src/modules/billing/price-catalogue.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { textListCost } from '../support/list-prices.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from '../text/text-helpers.js';
import { createTask, holdOf, waitForTerminal } from '../video/support/video-helpers.js';
import { DoubleRateCatalogue, WorkspacePricesModule } from './workspace-prices.module.js';

const TEXT_MODEL = 'vendor-3.8-flash';

describe('a PriceCatalogue override that prices one workspace differently', () => {
  let t: TestApp;
  let doubled: TestAccount;
  let listed: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'wsprices', imports: [WorkspacePricesModule] });
    doubled = await createAccount(t, { creditUsd: 10 });
    listed = await createAccount(t, { creditUsd: 10 });
    t.app.get(DoubleRateCatalogue).doubleRate.add(doubled.workspaceId);
  });
  after(async () => {
    await t.close();
  });

  it('is the catalogue the app injects', () => {
    assert.ok(t.app.get(PriceCatalogue) instanceof DoubleRateCatalogue);
  });

  it('holds and charges a text request at double for that workspace, at list price for another', async () => {
    const results = [];
    for (const account of [doubled, listed]) {
      const completion = await openaiFor(t, account.key).chat.completions.create({ model: TEXT_MODEL, messages: [{ role: 'user', content: 'price me' }] });
      const holds = await textHolds(t, account.workspaceId);
      assert.equal(holds.length, 1);
      assert.equal(holds[0]!.status, 'settled');
      const listCost = textListCost(TEXT_MODEL, completion.usage!.prompt_tokens, completion.usage!.completion_tokens);
      results.push({ amount: BigInt(holds[0]!.amount_micros), captured: BigInt(holds[0]!.captured_micros), listCost, wallet: await walletRow(t, account.workspaceId) });
    }
    const [double, list] = results as [(typeof results)[number], (typeof results)[number]];
    assert.ok(list.listCost > 0n);
    assert.equal(list.captured, list.listCost);
    assert.equal(double.captured, 2n * double.listCost);
    // The same request, so the same estimate: the hold doubles too.
    assert.equal(double.amount, 2n * list.amount);
    assert.deepEqual(double.wallet, { balance: 10_000_000n - 2n * double.listCost, held: 0n });
    assert.deepEqual(list.wallet, { balance: 10_000_000n - list.listCost, held: 0n });
  });

  it('holds and charges a video task at double for that workspace, at list price for another', async () => {
    const expected = new Map([
      [doubled, { amount: 2_000_000n, captured: 1_000_000n }],
      [listed, { amount: 1_000_000n, captured: 500_000n }],
    ]);
    for (const [account, figures] of expected) {
      const created = await createTask(t, account, { model: 'vendor-omni-1.1-flash-preview', prompt: 'a red fox running through snow' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal((await holdOf(t, created.body.id)).amount, figures.amount);
      const task = await waitForTerminal(t, account, created.body.id);
      assert.equal(task.status, 'succeeded', task.failureReason);
      const hold = await holdOf(t, created.body.id);
      assert.deepEqual({ status: hold.status, captured: hold.captured }, { status: 'settled', captured: figures.captured });
    }
  });
});
