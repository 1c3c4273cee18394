import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { GeminiGenerationConfig, GeminiRequest, GeminiResponse, GeminiTool } from './gemini-types.js';
import { MAX_OUTPUT_TOKENS } from './gemini-types.js';
import { SandboxTextProvider, sampleJson } from './sandbox-text.provider.js';

const sandbox = new SandboxTextProvider();

function request(text: string, generationConfig: GeminiGenerationConfig, tools?: GeminiTool[]): GeminiRequest {
  return { contents: [{ role: 'user', parts: [{ text }] }], generationConfig, ...(tools ? { tools } : {}) };
}

const tool = (parameters: unknown): GeminiTool[] => [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: parameters }] }];

/** Output tokens as billed: candidates plus thoughts. */
const outputTokens = (answer: GeminiResponse) => (answer.usageMetadata!.candidatesTokenCount ?? 0) + (answer.usageMetadata!.thoughtsTokenCount ?? 0);

const parts = (answer: GeminiResponse) => answer.candidates![0]!.content?.parts ?? [];

async function streamed(req: GeminiRequest): Promise<GeminiResponse[]> {
  const chunks: GeminiResponse[] = [];
  for await (const batch of await sandbox.stream({ model: 'vendor-3.8-flash', request: req })) chunks.push(...batch);
  return chunks;
}

describe('sandbox text: output budget (maxOutputTokens bounds every part)', () => {
  it('a tool schema asking for 5,000,000 items stops at the budget: no half call, MAX_TOKENS, usage within the cap', async () => {
    const req = request('hi', { maxOutputTokens: 50, thinkingConfig: { thinkingLevel: 'LOW' } }, tool({ type: 'object', properties: { a: { type: 'array', minItems: 5_000_000 } } }));
    const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: req });
    assert.equal(answer.candidates![0]!.finishReason, 'MAX_TOKENS');
    assert.deepEqual(parts(answer), []);
    assert.equal(outputTokens(answer), 50, 'the whole budget was generated (thoughts 24 + 26 of arguments)');
    const last = (await streamed(req)).at(-1)!;
    assert.equal(last.candidates![0]!.finishReason, 'MAX_TOKENS');
    assert.ok(outputTokens(last) <= 50);
  });

  it('minLength 4,000 under max_tokens 5 reports at most 5 output tokens (text, JSON output and tool arguments)', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', minLength: 4000 } } };
    for (const req of [
      request('hi', { maxOutputTokens: 5, thinkingConfig: { thinkingLevel: 'MINIMAL' } }, tool(schema)),
      request('hi', { maxOutputTokens: 5, thinkingConfig: { thinkingLevel: 'MINIMAL' }, responseMimeType: 'application/json', responseJsonSchema: schema }),
      request('write a long essay', { maxOutputTokens: 5, thinkingConfig: { thinkingLevel: 'MINIMAL' } }),
    ]) {
      const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: req });
      assert.equal(answer.candidates![0]!.finishReason, 'MAX_TOKENS');
      assert.ok(outputTokens(answer) <= 5, `output tokens ${outputTokens(answer)}`);
      const text = parts(answer).map((p) => p.text ?? '').join('');
      assert.ok(text.length <= 20, `text of ${text.length} characters`);
    }
  });

  it('structured output cut at the budget is the prefix of the schema-valid JSON, as Gemini returns it', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', minLength: 400 } } };
    const full = await sandbox.generate({ model: 'vendor-3.8-flash', request: request('hi', { thinkingConfig: { thinkingLevel: 'MINIMAL' }, responseMimeType: 'application/json', responseJsonSchema: schema }) });
    const cut = await sandbox.generate({ model: 'vendor-3.8-flash', request: request('hi', { maxOutputTokens: 10, thinkingConfig: { thinkingLevel: 'MINIMAL' }, responseMimeType: 'application/json', responseJsonSchema: schema }) });
    const fullText = parts(full)[0]!.text!;
    assert.equal(full.candidates![0]!.finishReason, 'STOP');
    assert.equal((JSON.parse(fullText) as { s: string }).s.length, 400);
    assert.equal(parts(cut)[0]!.text, fullText.slice(0, 40));
    assert.equal(outputTokens(cut), 10);
  });

  it('keeps schema-valid arguments when the budget allows, and counts them', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 2 }, tags: { type: 'array', minItems: 3, items: { enum: ['a', 'b'] } } }, required: ['city', 'days', 'tags'] };
    const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: request('Paris', { maxOutputTokens: 200, thinkingConfig: { thinkingLevel: 'LOW' } }, tool(schema)) });
    assert.equal(answer.candidates![0]!.finishReason, 'STOP');
    const call = parts(answer)[0]!.functionCall!;
    assert.deepEqual(call.args, { city: 'Paris', days: 2, tags: ['a', 'a', 'a'] });
    assert.equal(answer.usageMetadata!.candidatesTokenCount, Math.ceil(JSON.stringify(call).length / 4));
    assert.ok(outputTokens(answer) <= 200);
  });

  it('parallel calls: the ones that fit whole are returned, the turn ends at MAX_TOKENS', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', minLength: 100 } } };
    const req = request('go [sandbox:parallel=8]', { maxOutputTokens: 100, thinkingConfig: { thinkingLevel: 'MINIMAL' } }, tool(schema));
    const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: req });
    const calls = parts(answer).filter((p) => p.functionCall);
    assert.equal(calls.length, 2, 'two calls of about 150 characters fit in 400');
    assert.equal(answer.candidates![0]!.finishReason, 'MAX_TOKENS');
    assert.equal(outputTokens(answer), 100);
  });

  it('code execution parts that do not fit are not returned', async () => {
    const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: request('count me', { maxOutputTokens: 3, thinkingConfig: { thinkingLevel: 'MINIMAL' } }, [{ codeExecution: {} }]) });
    assert.deepEqual(parts(answer), []);
    assert.equal(answer.candidates![0]!.finishReason, 'MAX_TOKENS');
    assert.ok(outputTokens(answer) <= 3);
  });

  it('without max_tokens the largest cap (65,536) still bounds a multiplying schema, and other work runs meanwhile', async () => {
    const square = { type: 'object', properties: { a: { type: 'array', minItems: 60_000, items: { type: 'array', minItems: 60_000, items: { type: 'string', minLength: 60_000 } } } } };
    let turns = 0;
    let generating = true;
    const ticker = (async () => {
      while (generating) {
        await nextTurn();
        turns++;
      }
    })();
    const answer = await sandbox.generate({ model: 'vendor-3.8-flash', request: request('hi', { responseMimeType: 'application/json', responseJsonSchema: square }) });
    generating = false;
    await ticker;
    assert.equal(answer.candidates![0]!.finishReason, 'MAX_TOKENS');
    assert.ok(outputTokens(answer) <= MAX_OUTPUT_TOKENS);
    assert.ok(parts(answer)[0]!.text!.length <= MAX_OUTPUT_TOKENS * 4);
    assert.ok(turns >= 5, `the event loop ran ${turns} times during the generation`);
  });
});

describe('sampleJson', () => {
  it('stops at the character budget instead of building the value', async () => {
    const started = process.hrtime.bigint();
    const sample = await sampleJson({ type: 'array', minItems: 5_000_000, items: { type: 'array', minItems: 5_000_000 } }, 'h', 1000);
    assert.equal(sample.complete, false);
    assert.equal(sample.json.length, 1000);
    assert.ok(sample.json.startsWith('[["h","h"'));
    console.log(`sampleJson under a 1,000-character budget: ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
  });

  it('is complete and schema-valid within the budget', async () => {
    const sample = await sampleJson({ type: 'object', properties: { n: { type: 'number', maximum: 0 }, s: { type: 'string', maxLength: 2, minLength: 4 } } }, 'hello', 100);
    assert.deepEqual(JSON.parse(sample.json), { n: 0, s: 'hexx' });
    assert.equal(sample.complete, true);
  });
});
