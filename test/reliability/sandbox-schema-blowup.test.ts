/**
 * Attack: one small text request whose tool parameter schema asks for a huge value
 * (`{"type":"array","minItems":5000000}`, or `minLength: 4000`) under a tiny `max_tokens`.
 * The sandbox built the whole value synchronously, ignoring `max_tokens`: every other request
 * waited seconds, the process grew by hundreds of MB, and the reported usage (hence the
 * charge) was far above the hold. Sent here with the official `openai` SDK against the booted
 * app, while a small request runs alongside and the event-loop delay is measured.
 *
 * What must hold: a schema beyond the limits is a 400 before any hold (wallet unchanged, no
 * hold row); within the limits the reported completion tokens stay within `max_tokens` (all of
 * 65,536 when it is absent), the charge within the hold, and the other request is not blocked.
 * The figures (blocked time, process growth, tokens) are printed for the closing note.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from '../text/text-helpers.js';

const CREDIT_MICROS = 5_000_000n;
/** Far above what a yielding generation blocks for, far below the seconds the attack used to. */
const GENEROUS_BOUND_MS = 2_000;

const arrayTool = (parameter: Record<string, unknown>) => ({
  type: 'function' as const,
  function: { name: 'store', parameters: { type: 'object', properties: { items: parameter }, required: ['items'] } },
});

interface Measured<T> {
  outcome: { ok: true; value: T } | { ok: false; error: unknown };
  /** Longest event-loop stall while the attack ran. */
  maxDelayMs: number;
  /** A small request sent while the attack was in flight. */
  concurrentMs: number;
  rssGrowthMb: number;
}

describe('reliability: a tool schema asking for a huge value under a small max_tokens', () => {
  let t: TestApp;
  /** Another workspace's client: the small request that must not wait for the attack. */
  let bystander: OpenAI;

  before(async () => {
    t = await bootTestApp({ label: 'sandbox-schema-blowup' });
    bystander = openaiFor(t, (await createAccount(t, { creditUsd: 5 })).key);
  });
  after(async () => {
    await t.close();
  });

  async function underAttack<T>(label: string, attack: () => Promise<T>): Promise<Measured<T>> {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 10);
    delay.enable();
    const attacking = attack().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const started = performance.now();
    await bystander.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'ping' }], max_tokens: 64 });
    const concurrentMs = performance.now() - started;
    const outcome = await attacking;
    delay.disable();
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const measured = { outcome, maxDelayMs: delay.max / 1e6, concurrentMs, rssGrowthMb: (rssPeak - rssBefore) / 2 ** 20 };
    console.log(
      `[figures] ${label}: event loop blocked up to ${measured.maxDelayMs.toFixed(0)} ms, concurrent small request ${concurrentMs.toFixed(0)} ms, ` +
        `process grew ${measured.rssGrowthMb.toFixed(0)} MB`,
    );
    return measured;
  }

  async function assertNoHoldAndWalletUntouched(account: TestAccount): Promise<void> {
    assert.deepEqual(await textHolds(t, account.workspaceId), [], 'no hold row');
    const wallet = await walletRow(t, account.workspaceId);
    assert.equal(wallet.balance, CREDIT_MICROS);
    assert.equal(wallet.held, 0n);
  }

  /** The one text hold of the account is settled at most at its amount, and the wallet says so. */
  async function assertChargedWithinHold(account: TestAccount): Promise<void> {
    const holds = await textHolds(t, account.workspaceId);
    assert.equal(holds.length, 1);
    const hold = holds[0]!;
    assert.equal(hold.status, 'settled');
    assert.ok(BigInt(hold.captured_micros) <= BigInt(hold.amount_micros), `charged ${hold.captured_micros} µUSD, held ${hold.amount_micros} µUSD`);
    const wallet = await walletRow(t, account.workspaceId);
    assert.equal(wallet.balance, CREDIT_MICROS - BigInt(hold.captured_micros));
    assert.equal(wallet.held, 0n);
  }

  it('minItems 5,000,000 with max_tokens 50: 400 before any hold, and nothing else waits', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const client = openaiFor(t, account.key);
    const measured = await underAttack('minItems 5,000,000, max_tokens 50', () =>
      client.chat.completions.create({
        model: 'vendor-3.8-flash',
        messages: [{ role: 'user', content: 'store a few things' }],
        max_tokens: 50,
        tools: [arrayTool({ type: 'array', minItems: 5_000_000 })],
        tool_choice: 'required',
      }),
    );
    if (measured.outcome.ok) console.log(`[figures] minItems 5,000,000: completion_tokens ${measured.outcome.value.usage?.completion_tokens} for max_tokens 50`);
    assert.ok(!measured.outcome.ok, 'the request must be refused');
    const error = measured.outcome.error;
    assert.ok(error instanceof OpenAI.APIError && error.status === 400, String(error));
    assert.equal(error.code, 'text.invalid_field');
    assert.match(error.message, /tools\.0\.function\.parameters\.properties\.items\.minItems: must be at most 65536/);
    await assertNoHoldAndWalletUntouched(account);
    assert.ok(measured.concurrentMs < GENEROUS_BOUND_MS, `a small request waited ${measured.concurrentMs} ms`);
  });

  it('minLength 4,000 with max_tokens 5: at most 5 completion tokens, charged within the hold (sync and streamed)', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const client = openaiFor(t, account.key);
    const body = {
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user' as const, content: 'store a long text' }],
      max_tokens: 5,
      tools: [arrayTool({ type: 'string', minLength: 4000 })],
      tool_choice: 'required' as const,
    };
    const measured = await underAttack('minLength 4,000, max_tokens 5', () => client.chat.completions.create(body));
    assert.ok(measured.outcome.ok, String(!measured.outcome.ok && measured.outcome.error));
    const completion = measured.outcome.value;
    console.log(`[figures] minLength 4,000: completion_tokens ${completion.usage!.completion_tokens} for max_tokens 5`);
    assert.ok(completion.usage!.completion_tokens <= 5, `completion_tokens ${completion.usage!.completion_tokens}`);
    assert.equal(completion.choices[0]!.finish_reason, 'length');
    await assertChargedWithinHold(account);

    const streamAccount = await createAccount(t, { creditUsd: 5 });
    const stream = await openaiFor(t, streamAccount.key).chat.completions.create({ ...body, stream: true });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    assert.ok(usage!.completion_tokens <= 5, `streamed completion_tokens ${usage!.completion_tokens}`);
    await assertChargedWithinHold(streamAccount);
  });

  it('within the limits, without max_tokens: output stops at 65,536 tokens, charged within the hold, other requests keep flowing', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const client = openaiFor(t, account.key);
    // 60,000 items of 1,000 characters: 60 MB if built whole; the largest output cap is about 262 KB.
    const schema = { type: 'object', properties: { items: { type: 'array', minItems: 60_000, items: { type: 'string', minLength: 1_000 } } }, required: ['items'] };
    const measured = await underAttack('structured output 60,000 × 1,000 characters, no max_output_tokens', () =>
      client.responses.create({ model: 'vendor-3.8-flash', input: 'list things', text: { format: { type: 'json_schema', name: 'things', schema } } }),
    );
    assert.ok(measured.outcome.ok, String(!measured.outcome.ok && measured.outcome.error));
    const response = measured.outcome.value;
    console.log(`[figures] 60,000 × 1,000 characters: output_tokens ${response.usage!.output_tokens} for the cap 65,536`);
    assert.ok(response.usage!.output_tokens <= 65_536, `output_tokens ${response.usage!.output_tokens}`);
    assert.equal(response.status, 'incomplete');
    await assertChargedWithinHold(account);
    assert.ok(measured.maxDelayMs < GENEROUS_BOUND_MS, `the event loop stalled ${measured.maxDelayMs} ms`);
    assert.ok(measured.concurrentMs < GENEROUS_BOUND_MS, `a small request waited ${measured.concurrentMs} ms`);
  });
});
