import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { MODELS, openaiSuite, textHolds } from './text-helpers.js';

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

describe('POST /api/svc/v1/responses (sandbox, official openai SDK)', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  openaiSuite({ label: 'text-responses', creditUsd: 25 }, (booted) => ({ t, account, client } = booted));

  for (const model of MODELS) {
    it(`answers synchronously on ${model}`, async () => {
      const response = await client.responses.create({ model, input: 'Describe the old bridge', instructions: 'Be brief.', store: false, metadata: { a: 'b' } });
      assert.equal(response.object, 'response');
      assert.equal(response.status, 'completed');
      assert.equal(typeof response.created_at, 'number');
      assert.match(response.output_text, /old bridge/);
      const item = response.output[0] as OpenAI.Responses.ResponseOutputMessage & Record<string, any>;
      assert.equal(item.type, 'message');
      assert.equal(item.role, 'assistant');
      assert.equal(item.content[0]!.type, 'output_text');
      assert.ok(item.providerMetadata.vendor.parts.length >= 1);
      assert.ok(response.usage!.input_tokens > 0 && response.usage!.output_tokens > 0);
    });
  }

  it('streams with .stream(): ordered sequence numbers, stable item ids, one terminal event, no [DONE]', async () => {
    const stream = client.responses.stream({ model: 'vendor-3.8-flash', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Stream about rivers' }] }] });
    const events: Array<Record<string, any>> = [];
    for await (const event of stream) events.push(event as any);
    const final = await stream.finalResponse();
    assert.equal(events[0]!.type, 'response.created');
    assert.equal(events[1]!.type, 'response.in_progress');
    events.forEach((e, i) => assert.equal(e.sequence_number, i));
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    assert.ok(deltas.length >= 3);
    assert.equal(new Set(deltas.map((d) => d.item_id)).size, 1);
    const terminal = events.filter((e) => ['response.completed', 'response.incomplete', 'response.failed'].includes(e.type));
    assert.equal(terminal.length, 1);
    assert.equal(events[events.length - 1]!.type, 'response.completed');
    assert.equal(final.output_text, deltas.map((d) => d.delta).join(''));
    assert.ok(final.usage!.output_tokens > 0);
  });

  it('runs a two-turn tool round trip (sync), replaying output items with their providerMetadata', async () => {
    const input: any[] = [{ role: 'user', content: 'Weather in Madrid?' }];
    const first = await client.responses.create({ model: 'vendor-3.7-flash', input, tools: [weather] });
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall & Record<string, any>;
    assert.ok(call);
    assert.equal(call.name, 'get_weather');
    assert.equal(typeof JSON.parse(call.arguments).city, 'string');
    assert.ok(call.providerMetadata.vendor.parts[0].thoughtSignature);
    assert.equal(call.providerMetadata.vendor.parts[0].functionCall.id, call.call_id);

    input.push(...first.output, { type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 30}' });
    const second = await client.responses.create({ model: 'vendor-3.7-flash', input, tools: [weather] });
    assert.equal(second.status, 'completed');
    assert.match(second.output_text, /get_weather returned \{"temperature":30\}/);

    // Without the providerMetadata the signature is gone: the sandbox refuses like Gemini 3.
    const bare = { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments };
    await assert.rejects(
      client.responses.create({ model: 'vendor-3.7-flash', input: [input[0], bare, input[input.length - 1]], tools: [weather] }),
      (e: any) => e.status === 400 && e.error.code === 'text.upstream_rejected',
    );
  });

  it('runs a two-turn tool round trip streamed with .stream()', async () => {
    const input: any[] = [{ role: 'user', content: 'Weather in Rome, streamed' }];
    const stream = client.responses.stream({ model: 'vendor-3.8-flash', input, tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } });
    const events: Array<Record<string, any>> = [];
    for await (const event of stream) events.push(event as any);
    const final = await stream.finalResponse();
    const argDeltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    assert.equal(argDeltas.length, 1, 'arguments arrive complete in one delta');
    assert.ok(events.some((e) => e.type === 'response.function_call_arguments.done'));
    const call = final.output.find((o) => o.type === 'function_call') as any;
    assert.equal(argDeltas[0]!.delta, call.arguments);
    assert.ok(call.providerMetadata.vendor.parts[0].thoughtSignature);

    input.push(...final.output, {
      type: 'function_call_output',
      call_id: call.call_id,
      output: [{ type: 'input_text', text: 'cloudy' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }],
    });
    const second = client.responses.stream({ model: 'vendor-3.8-flash', input, tools: [weather] });
    const answer = await second.finalResponse();
    assert.equal(answer.status, 'completed');
    assert.match(answer.output_text, /get_weather returned \{"output":"cloudy"\}/);
  });

  it('returns structured output for text.format json_schema', async () => {
    const response = await client.responses.create({
      model: 'vendor-3.8-flash',
      input: 'A city record',
      text: { format: { type: 'json_schema', name: 'city', strict: true, schema: { type: 'object', properties: { name: { type: 'string' }, population: { type: 'integer', minimum: 0 } }, required: ['name', 'population'], additionalProperties: false } } },
    });
    const parsed = JSON.parse(response.output_text) as { name: string; population: number };
    assert.equal(typeof parsed.name, 'string');
    assert.ok(Number.isInteger(parsed.population));
  });

  it('surfaces code execution parts in providerMetadata when enabled through providerOptions.vendor.tools', async () => {
    const response = await client.responses.create({
      model: 'vendor-3.8-flash',
      input: 'count these letters',
      providerOptions: { vendor: { tools: [{ codeExecution: {} }] } },
    } as any);
    const parts = (response.output[0] as any).providerMetadata.vendor.parts as Array<Record<string, any>>;
    assert.ok(parts.some((p) => p.executableCode?.language === 'PYTHON'));
    assert.equal(parts.find((p) => p.codeExecutionResult)!.codeExecutionResult.outcome, 'OUTCOME_OK');
  });

  it('turns computer-use actions into function calls', async () => {
    const response = await client.responses.create({
      model: 'vendor-3.8-flash',
      input: 'open the page',
      providerOptions: { vendor: { tools: [{ computerUse: { environment: 'ENVIRONMENT_BROWSER' } }] } },
    } as any);
    const call = response.output.find((o) => o.type === 'function_call') as any;
    assert.equal(call.name, 'click_at');
    assert.deepEqual(JSON.parse(call.arguments), { x: 500, y: 500 });
  });

  it('an answer cut by max_output_tokens is incomplete, and so is the message it was cut in (sync and streamed)', async () => {
    const sync = await client.responses.create({ model: 'vendor-3.8-flash', input: 'write a long essay about rivers', max_output_tokens: 5 });
    assert.equal(sync.status, 'incomplete');
    assert.deepEqual(sync.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal((sync.output.at(-1) as { status: string }).status, 'incomplete');

    const stream = client.responses.stream({ model: 'vendor-3.8-flash', input: 'write a long essay about lakes', max_output_tokens: 5 });
    const done: string[] = [];
    for await (const event of stream) if (event.type === 'response.output_item.done') done.push((event.item as { status: string }).status);
    const final = await stream.finalResponse();
    assert.equal(final.status, 'incomplete');
    assert.equal(done.at(-1), 'incomplete');
    assert.equal((final.output.at(-1) as { status: string }).status, 'incomplete');
  });

  it('settles every call of this suite', async () => {
    for (const hold of await textHolds(t, account.workspaceId)) assert.notEqual(hold.status, 'open');
  });
});
