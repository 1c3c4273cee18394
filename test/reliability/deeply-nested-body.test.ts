/**
 * Attack: a text request a few dozen KB long whose JSON is nested thousands of levels deep (in
 * an ignored field such as `metadata`, or inside a tool result). Every reader of the body walks
 * it recursively, so the translation overflowed the stack and the client got a 500 instead of
 * a clear 400, on both operations.
 *
 * What must hold, with the official `openai` SDK: 400 `text.invalid_field` naming the limit for
 * JSON carried in strings (tool results, call arguments), 400 `request.too_deep` for the body
 * itself, before any hold.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { openaiSuite, textHolds } from '../text/text-helpers.js';

/** JSON text nested `levels` objects deep (built as text: JSON.stringify itself would overflow). */
const nestedJson = (levels: number) => `${'{"a":'.repeat(levels)}{}${'}'.repeat(levels)}`;

describe('reliability: a deeply nested text request body', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  openaiSuite({ label: 'deeply-nested-body', creditUsd: 5 }, (booted) => ({ t, account, client } = booted));

  it('is a 400 text.invalid_field before any hold on both operations, not a 500', async () => {
    const deep = nestedJson(20_000);
    const attempts: Array<[string, Promise<unknown>]> = [
      // Tool results and arguments are JSON strings the service parses.
      ['chat tool result', client.chat.completions.create({
        model: 'vendor-3.8-flash',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: deep },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      })],
      ['responses function arguments', client.responses.create({
        model: 'vendor-3.8-flash',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: deep },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: false }],
      })],
    ];
    for (const [label, attempt] of attempts) {
      const error = await attempt.then(
        () => assert.fail(`${label} was accepted`),
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, 400, `${label}: ${error.message}`);
      assert.equal(error.code, 'text.invalid_field', label);
      assert.match(error.message, /nested deeper than 100 levels/, label);
    }
    // Nesting in the body itself (an ignored field here): the SDK cannot even serialize it, a raw
    // client can. The platform's depth limit (REQUEST_MAX_DEPTH, 64) refuses it before parsing;
    // the text translation's own limit (100) stays behind it for a deployment that raises it.
    const raw = await t.request('/api/svc/v1/chat/completions', {
      method: 'POST',
      key: account.key,
      headers: { 'content-type': 'application/json' },
      body: `{"model":"vendor-3.8-flash","messages":[{"role":"user","content":"hi"}],"metadata":${deep}}`,
    });
    assert.equal(raw.status, 400);
    assert.deepEqual(await raw.json(), { error: { code: 'request.too_deep', message: 'request body nests objects and arrays deeper than 64 levels' } });
    assert.deepEqual(await textHolds(t, account.workspaceId), []);
  });
});
