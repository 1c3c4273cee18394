import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { textListCost } from '../support/list-prices.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { AbandonedTextHolds } from '../../src/modules/text/abandoned-text-holds.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from './text-helpers.js';

describe('text money: hold, settle on reported usage, partial charge on abort, release on failure', () => {
  let t: TestApp;
  let client: OpenAI;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'text-ledger' });
  });
  after(async () => {
    await t.close();
  });

  it('a sync call charges exactly the reported usage at catalogue prices', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    const completion = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'price me' }] });
    const [hold] = await textHolds(t, account.workspaceId);
    const expected = textListCost('vendor-3.8-flash', completion.usage!.prompt_tokens, completion.usage!.completion_tokens);
    assert.equal(hold!.status, 'settled');
    assert.equal(BigInt(hold!.captured_micros), expected);
    assert.equal(hold!.subject_id, completion.id);
    const wallet = await walletRow(t, account.workspaceId);
    assert.equal(wallet.held, 0n);
    assert.equal(wallet.balance, 10_000_000n - expected);
  });

  it('the hold covers the charge: thoughts count inside max_tokens, and media as tokens per item, not bytes', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    // Thinking at "high" with a 1-token cap: Gemini bills thoughts and answer together under the cap.
    const capped = await client.chat.completions.create({ model: 'vendor-3.7-flash', messages: [{ role: 'user', content: 'think hard' }], max_tokens: 1, reasoning_effort: 'high' });
    assert.equal(capped.choices[0]!.finish_reason, 'length');
    assert.ok(capped.usage!.completion_tokens <= 1, `completion_tokens ${capped.usage!.completion_tokens}`);
    // A 1.5 MB inline image: a few hundred tokens upstream, not one token per base64 character.
    const png = Buffer.alloc(1_500_000, 7).toString('base64');
    await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    const holds = await textHolds(t, account.workspaceId);
    assert.equal(holds.length, 2);
    for (const hold of holds) {
      assert.equal(hold.status, 'settled');
      assert.ok(BigInt(hold.captured_micros) <= BigInt(hold.amount_micros), `captured ${hold.captured_micros} within the hold ${hold.amount_micros}`);
    }
    const adjust: Array<{ count: string }> = await t.db.query(`SELECT count(*)::text AS count FROM ledger_entry WHERE workspace_id = $1 AND kind = 'adjust'`, [account.workspaceId]);
    assert.equal(adjust[0]!.count, '0', 'no charge above a hold');
  });

  it('a streamed call is settled before [DONE], on the usage the stream reports (never zero)', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    const stream = await client.chat.completions.create({ model: 'vendor-3.7-flash', messages: [{ role: 'user', content: 'stream me' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    // The SDK stops at [DONE]: by then the hold must already be settled.
    const [hold] = await textHolds(t, account.workspaceId);
    assert.equal(hold!.status, 'settled');
    const expected = textListCost('vendor-3.7-flash', usage!.prompt_tokens, usage!.completion_tokens);
    assert.ok(expected > 0n);
    assert.equal(BigInt(hold!.captured_micros), expected);
  });

  it('a Responses stream is settled before its terminal event', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    const stream = client.responses.stream({ model: 'vendor-3.5-flash-lite', input: 'stream me' });
    let settledAtTerminal: string | undefined;
    for await (const event of stream) {
      if (event.type === 'response.completed') settledAtTerminal = (await textHolds(t, account.workspaceId))[0]!.status;
    }
    assert.equal(settledAtTerminal, 'settled');
  });

  it('a client abort mid-stream cancels the upstream and charges what was produced (not zero, not the hold)', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'a long story please [sandbox:delay=150]' }], stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    let sawDone = false;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) received++;
      if (chunk.choices[0]?.finish_reason) sawDone = true;
      if (received === 2) controller.abort(); // the SDK ends the iteration quietly on abort
    }
    assert.equal(received, 2);
    assert.equal(sawDone, false);
    // The abort reaches the server after the client has stopped reading: the hold settles just after.
    const [hold] = await eventually(() => textHolds(t, account.workspaceId), (holds) => holds.length >= 1 && holds[0]!.status !== 'open', 'the hold of the aborted stream resolving', 5_000);
    assert.equal(hold!.status, 'settled');
    const captured = BigInt(hold!.captured_micros);
    assert.ok(captured > 0n, 'never zero');
    assert.ok(captured < BigInt(hold!.amount_micros), 'never the full hold');
    // The full answer would have cost more than what was charged.
    const full = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'a long story please' }] });
    assert.ok(captured < textListCost('vendor-3.8-flash', full.usage!.prompt_tokens, full.usage!.completion_tokens));
  });

  it("a client that leaves a stream after its headers but before the upstream's first chunk is charged nothing (Chat and Responses)", async () => {
    account = await createAccount(t, { creditUsd: 10 });
    for (const path of ['chat/completions', 'responses']) {
      const controller = new AbortController();
      const prompt = 'a long story please [sandbox:delay=3000]';
      const body = path === 'responses' ? { model: 'vendor-3.8-flash', input: prompt, stream: true } : { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: prompt }], stream: true };
      const response = await fetch(`${t.baseUrl}/api/svc/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      // The SSE headers are out (the upstream answered); its first chunk is 3 s away.
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
      controller.abort();
    }
    const holds = await eventually(() => textHolds(t, account.workspaceId), (rows) => rows.length === 2 && rows.every((h) => h.status !== 'open'), 'both holds resolving', 5_000);
    for (const hold of holds) {
      assert.equal(hold.status, 'released');
      assert.equal(hold.captured_micros, '0');
    }
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 10_000_000n, held: 0n });
  });

  it('an upstream failure before any output releases the hold (sync and streamed)', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
    await assert.rejects(
      client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x [sandbox:fail]' }] }),
      (e: any) => e.status === 502 && e.error.code === 'text.upstream_error',
    );
    await assert.rejects(
      client.responses.create({ model: 'vendor-3.8-flash', input: 'x [sandbox:fail]', stream: true }),
      (e: any) => e.status === 502,
    );
    const holds = await textHolds(t, account.workspaceId);
    assert.equal(holds.length, 2);
    for (const hold of holds) {
      assert.equal(hold.status, 'released');
      assert.equal(hold.captured_micros, '0');
    }
    const wallet = await walletRow(t, account.workspaceId);
    assert.deepEqual(wallet, { balance: 10_000_000n, held: 0n });
  });

  it('a text hold left open by a process that died mid-request is released by the sweep; live requests and other holds are untouched', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    const wallet = t.app.get(WalletService);
    const hold = (subjectType: string, subjectId: string) =>
      wallet.hold({ workspaceId: account.workspaceId, environment: 'live', apiKeyId: account.keyId, amountMicros: 1_000_000n, subjectType, subjectId });
    // What a killed API process leaves behind: holds made, never settled.
    const abandoned = await hold('text', 'chatcmpl-dead-process');
    const recent = await hold('text', 'chatcmpl-still-running');
    const video = await hold('video_task', 'omni:not-a-text-hold');
    await t.db.query(`UPDATE hold SET created_at = now() - interval '3 hours' WHERE id = ANY($1::uuid[])`, [[abandoned, video]]);
    assert.equal((await walletRow(t, account.workspaceId)).held, 3_000_000n);

    assert.equal(await t.app.get(AbandonedTextHolds).releaseAbandoned(), 1);
    const statuses = await t.db.query<{ id: string; status: string }>('SELECT id, status FROM hold WHERE id = ANY($1::uuid[])', [[abandoned, recent, video]]);
    assert.deepEqual(Object.fromEntries(statuses.map((r) => [r.id, r.status])), { [abandoned]: 'released', [recent]: 'open', [video]: 'open' });
    const after = await walletRow(t, account.workspaceId);
    assert.equal(after.held, 2_000_000n);
    assert.equal(after.balance, 10_000_000n, 'nothing charged for an answer never given');
    // Running it again changes nothing.
    assert.equal(await t.app.get(AbandonedTextHolds).releaseAbandoned(), 0);
    await wallet.release(recent);
    await wallet.release(video);
  });
});
