import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DomainError } from '../../libs/common/index.js';
import { textListCost } from '../support/list-prices.js';
import type { AuthenticatedKey } from '../../src/modules/identity/authenticated-key.js';
import type { TextEvent } from '../../src/modules/text/text-events.js';
import { TextGenerationUseCase } from '../../src/modules/text/text-generation.use-case.js';
import { translateTextRequest } from '../../src/modules/text/translation/translate-request.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { textHolds, walletRow, weatherTool } from './text-helpers.js';

/**
 * The text use case without HTTP, as a WebSocket transport would drive it: a translated request
 * in, TextEvents out, and the wallet settled before the event that lets a transport end the answer.
 */
describe('text generation use case (transport-free events)', () => {
  let t: TestApp;
  let generation: TextGenerationUseCase;

  before(async () => {
    t = await bootTestApp({ label: 'text-use-case' });
    generation = t.app.get(TextGenerationUseCase);
  });
  after(async () => {
    await t.close();
  });

  const keyOf = (account: TestAccount): AuthenticatedKey => ({ id: account.keyId, workspaceId: account.workspaceId, environment: 'live' });

  /** Runs to the end, recording each event with the hold's status at the moment it was yielded. */
  async function collect(account: TestAccount, body: Record<string, unknown>, subjectId: string, signal?: AbortSignal, onEvent?: (event: TextEvent) => void) {
    const seen: Array<{ event: TextEvent; hold: string | undefined }> = [];
    for await (const events of generation.run(keyOf(account), translateTextRequest('chat', body), { subjectId, signal })) {
      for (const event of events) {
        seen.push({ event, hold: (await textHolds(t, account.workspaceId))[0]?.status });
        onEvent?.(event);
      }
    }
    return seen;
  }

  it('streams started, deltas, whole tool calls, usage, then settled once the charge is recorded', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const seen = await collect(
      account,
      { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'weather in Paris?' }], tools: [weatherTool], stream: true },
      'chatcmpl-use-case-stream',
    );
    const types = seen.map((s) => s.event.type);
    assert.equal(types[0], 'started');
    assert.deepEqual(types.slice(-2), ['usage', 'settled']);
    assert.ok(types.includes('delta'));
    const call = seen.find((s) => s.event.type === 'tool_call')?.event;
    assert.ok(call?.type === 'tool_call');
    assert.equal(call.call.name, 'get_weather');
    // Each tool call follows the delta that carried it.
    const callAt = types.indexOf('tool_call');
    assert.ok(types.slice(0, callAt).includes('delta'));
    // Held until usage; charged before settled is seen.
    assert.equal(seen.find((s) => s.event.type === 'usage')!.hold, 'open');
    const settled = seen.at(-1)!;
    assert.equal(settled.hold, 'settled');
    assert.ok(settled.event.type === 'settled' && settled.event.complete);
    const [hold] = await textHolds(t, account.workspaceId);
    assert.equal(hold!.subject_id, 'chatcmpl-use-case-stream');
    assert.equal(BigInt(hold!.captured_micros), textListCost('vendor-3.8-flash', settled.event.usage.inputTokens, settled.event.usage.outputTokens));
  });

  it('yields one delta with the whole answer when the request does not stream; its text is the visible text', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const seen = await collect(account, { model: 'vendor-3.7-flash', messages: [{ role: 'user', content: 'hello there' }] }, 'chatcmpl-use-case-once');
    assert.deepEqual(
      seen.map((s) => s.event.type),
      ['started', 'delta', 'usage', 'settled'],
    );
    const delta = seen[1]!.event;
    assert.ok(delta.type === 'delta');
    const visible = (delta.chunk.candidates?.[0]?.content?.parts ?? []).filter((p) => p.thought !== true && typeof p.text === 'string').map((p) => p.text).join('');
    assert.ok(delta.text.length > 0);
    assert.equal(delta.text, visible);
    assert.equal(seen.at(-1)!.hold, 'settled');
  });

  it('an aborted signal ends the stream with a partial settlement: charged for the output so far, not the hold', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const abort = new AbortController();
    let deltas = 0;
    const seen = await collect(
      account,
      { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'a long story please [sandbox:delay=100]' }], stream: true },
      'chatcmpl-use-case-abort',
      abort.signal,
      (event) => {
        if (event.type === 'delta' && ++deltas === 2) abort.abort();
      },
    );
    const last = seen.at(-1)!.event;
    assert.ok(last.type === 'settled');
    assert.equal(last.complete, false);
    assert.ok(!seen.some((s) => s.event.type === 'usage'), 'no complete usage after an abort');
    const [hold] = await textHolds(t, account.workspaceId);
    assert.equal(hold!.status, 'settled');
    assert.ok(BigInt(hold!.captured_micros) > 0n);
    assert.ok(BigInt(hold!.captured_micros) < BigInt(hold!.amount_micros));
  });

  it('an upstream refusal before any output is thrown, not yielded, and the hold is released', async () => {
    const account = await createAccount(t, { creditUsd: 5 });
    const events: TextEvent[] = [];
    await assert.rejects(
      (async () => {
        for await (const step of generation.run(keyOf(account), translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x [sandbox:fail]' }], stream: true }), { subjectId: 'chatcmpl-use-case-fail' })) {
          events.push(...step);
        }
      })(),
      (error: unknown) => error instanceof DomainError && error.status === 502 && error.code === 'text.upstream_error',
    );
    assert.deepEqual(events, []);
    const [hold] = await textHolds(t, account.workspaceId);
    assert.equal(hold!.status, 'released');
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 5_000_000n, held: 0n });
  });
});
