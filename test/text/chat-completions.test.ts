import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { MODELS, openaiSuite, textHolds, weatherTool } from './text-helpers.js';

type AnyMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam & Record<string, unknown>;

describe('POST /api/svc/v1/chat/completions (sandbox, official openai SDK)', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  openaiSuite({ label: 'text-chat', creditUsd: 25 }, (booted) => ({ t, account, client } = booted));

  for (const model of MODELS) {
    it(`answers synchronously on ${model} with usage`, async () => {
      const completion = await client.chat.completions.create({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Tell me about the harbour at dawn' },
        ],
        user: 'ignored-user-field',
        metadata: { ignored: 'yes' },
        store: false,
      } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, model);
      assert.equal(completion.choices.length, 1);
      assert.equal(completion.choices[0]!.finish_reason, 'stop');
      assert.match(completion.choices[0]!.message.content ?? '', /harbour at dawn/);
      assert.ok(completion.usage!.prompt_tokens > 0);
      assert.ok(completion.usage!.completion_tokens > 0);
      assert.equal(completion.usage!.total_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    });

    it(`streams on ${model}: several chunks, stable id, usage chunk, then [DONE]`, async () => {
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Stream a few words about lighthouses please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const contentChunks = chunks.filter((c) => c.choices[0]?.delta.content);
      assert.ok(contentChunks.length >= 3, `expected several content chunks, got ${contentChunks.length}`);
      assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
      assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
      const last = chunks[chunks.length - 1]!;
      assert.deepEqual(last.choices, []);
      assert.ok(last.usage && last.usage.completion_tokens > 0 && last.usage.prompt_tokens > 0);
      assert.equal(chunks[chunks.length - 2]!.choices[0]!.finish_reason, 'stop');
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      assert.match(text, /lighthouses/);
    });
  }

  it('ends every stream with the usage chunk (empty choices), even without stream_options.include_usage', async () => {
    const raw = await fetch(`${t.baseUrl}/api/svc/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'count my usage' }], stream: true }),
    });
    const events = (await raw.text()).split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
    assert.equal(events.at(-1), '[DONE]');
    const usageChunk = JSON.parse(events.at(-2)!) as OpenAI.Chat.Completions.ChatCompletionChunk;
    assert.deepEqual(usageChunk.choices, []);
    assert.ok(usageChunk.usage!.prompt_tokens > 0 && usageChunk.usage!.completion_tokens > 0);
    const finish = JSON.parse(events.at(-3)!) as OpenAI.Chat.Completions.ChatCompletionChunk;
    assert.equal(finish.choices[0]!.finish_reason, 'stop');
    assert.equal('usage' in finish, false, 'usage: null on every chunk only when include_usage asks for it (as OpenAI)');
  });

  it('works with the SDK stream helper (.stream / finalChatCompletion)', async () => {
    const runner = client.chat.completions.stream({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'hello helper' }] });
    const deltas: string[] = [];
    runner.on('content', (delta) => deltas.push(delta));
    const final = await runner.finalChatCompletion();
    assert.ok(deltas.length >= 2);
    assert.equal(final.choices[0]!.message.content, deltas.join(''));
    assert.equal(final.choices[0]!.finish_reason, 'stop');
  });

  it('returns structured output for json_schema (and json_object)', async () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, rating: { type: 'integer', minimum: 1, maximum: 5 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['title', 'rating', 'tags'],
      additionalProperties: false,
    };
    const completion = await client.chat.completions.create({
      model: 'vendor-3.7-flash',
      messages: [{ role: 'user', content: 'Review the film' }],
      response_format: { type: 'json_schema', json_schema: { name: 'review', schema, strict: true } },
    });
    const parsed = JSON.parse(completion.choices[0]!.message.content!) as { title: string; rating: number; tags: string[] };
    assert.equal(typeof parsed.title, 'string');
    assert.ok(Number.isInteger(parsed.rating) && parsed.rating >= 1 && parsed.rating <= 5);
    assert.ok(Array.isArray(parsed.tags));

    const loose = await client.chat.completions.create({
      model: 'vendor-3.5-flash-lite',
      messages: [{ role: 'user', content: 'Give JSON' }],
      response_format: { type: 'json_object' },
    });
    assert.equal(typeof JSON.parse(loose.choices[0]!.message.content!), 'object');
  });

  it('runs a two-turn tool round trip (sync); the sandbox checks the replayed thought signature', async () => {
    const messages: AnyMessage[] = [{ role: 'user', content: 'What is the weather in Lisbon?' }];
    const first = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages, tools: [weatherTool], tool_choice: 'auto' });
    const message = first.choices[0]!.message as OpenAI.Chat.Completions.ChatCompletionMessage & Record<string, any>;
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(message.tool_calls!.length, 1);
    const call = message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall & Record<string, any>;
    assert.equal(call.function.name, 'get_weather');
    const args = JSON.parse(call.function.arguments) as { city: string; unit: string; days: number };
    assert.equal(typeof args.city, 'string');
    assert.ok(['celsius', 'fahrenheit'].includes(args.unit));
    assert.ok(Number.isInteger(args.days) && args.days >= 1);
    const signature = call.extra_content?.vendor?.thought_signature as string;
    assert.ok(signature, 'the call carries the upstream thought signature');
    assert.equal(call.extra_content.vendor.function_call_id, call.id, 'the native call id is the call id');
    const parts = message.providerMetadata.vendor.parts as Array<Record<string, any>>;
    assert.equal(parts[0]!.thoughtSignature, signature);

    messages.push(message as AnyMessage, { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21, "sky": "clear"}' });
    const second = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages, tools: [weatherTool] });
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    assert.match(second.choices[0]!.message.content!, /get_weather returned \{"temperature":21,"sky":"clear"\}/);

    // Rebuilt without providerMetadata, the extra_content still carries the signature.
    const rebuilt: AnyMessage = { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function, extra_content: call.extra_content } as any] };
    const third = await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [messages[0]!, rebuilt, messages[2]!],
      tools: [weatherTool],
    });
    assert.equal(third.choices[0]!.finish_reason, 'stop');
  });

  it('refuses a replay whose thought signature is missing or altered (as Gemini 3 does)', async () => {
    const messages: AnyMessage[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await client.chat.completions.create({ model: 'vendor-3.7-flash', messages, tools: [weatherTool] });
    const message = first.choices[0]!.message as any;
    const call = message.tool_calls[0];
    const toolResult: AnyMessage = { role: 'tool', tool_call_id: call.id, content: 'sunny' };

    const stripped: AnyMessage = { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function } as any] };
    await assert.rejects(
      client.chat.completions.create({ model: 'vendor-3.7-flash', messages: [messages[0]!, stripped, toolResult], tools: [weatherTool] }),
      (error: any) => error.status === 400 && error.error?.code === 'text.upstream_rejected' && /thought_signature/.test(error.error.message),
    );

    const altered = structuredClone(message);
    altered.providerMetadata.vendor.parts[0].thoughtSignature = Buffer.from('forged').toString('base64');
    await assert.rejects(
      client.chat.completions.create({ model: 'vendor-3.7-flash', messages: [messages[0]!, altered, toolResult], tools: [weatherTool] }),
      (error: any) => error.status === 400 && /Corrupted thought signature/.test(error.error.message),
    );
  });

  it('runs a two-turn tool round trip streamed, concatenating providerMetadata parts in stream order', async () => {
    const messages: AnyMessage[] = [{ role: 'user', content: 'Weather in Porto, streamed' }];
    const stream = await client.chat.completions.create({ model: 'vendor-3.5-flash-lite', messages, tools: [weatherTool], stream: true });
    const parts: unknown[] = [];
    const calls = new Map<number, any>();
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta as any;
      if (delta.providerMetadata) parts.push(...delta.providerMetadata.vendor.parts);
      for (const tc of delta.tool_calls ?? []) {
        const existing = calls.get(tc.index);
        if (existing) existing.function.arguments += tc.function?.arguments ?? '';
        else calls.set(tc.index, { id: tc.id, type: tc.type, function: { ...tc.function }, extra_content: tc.extra_content });
      }
      finish = choice.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    const call = calls.get(0)!;
    assert.ok(call.extra_content.vendor.thought_signature);
    const assistant = { role: 'assistant', content: null, tool_calls: [...calls.values()], providerMetadata: { vendor: { parts } } } as unknown as AnyMessage;
    const second = await client.chat.completions.create({
      model: 'vendor-3.5-flash-lite',
      messages: [...messages, assistant, { role: 'tool', tool_call_id: call.id, content: 'rain' }],
      tools: [weatherTool],
      stream: true,
    });
    let text = '';
    for await (const chunk of second) text += chunk.choices[0]?.delta.content ?? '';
    assert.match(text, /get_weather returned \{"output":"rain"\}/);
  });

  it("replays what the SDK's stream helper assembles (it keeps only the last chunk's parts): parallel calls and text survive", async () => {
    const messages: AnyMessage[] = [{ role: 'user', content: 'Weather in two cities, streamed [sandbox:parallel=2]' }];
    const runner = client.chat.completions.stream({ model: 'vendor-3.8-flash', messages, tools: [weatherTool], tool_choice: 'required' });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0]!.message as any;
    assert.equal(message.tool_calls.length, 2);
    const results = message.tool_calls.map((c: any, i: number) => ({ role: 'tool', tool_call_id: c.id, content: `result ${i}` }));
    const second = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [...messages, message, ...results], tools: [weatherTool] });
    assert.match(second.choices[0]!.message.content!, /2 tool results/);

    // A text turn assembled by the helper: the whole text is replayed, not the last chunk's tail.
    const chat: AnyMessage[] = [{ role: 'user', content: 'tell me something long' }];
    const answer = (await client.chat.completions.stream({ model: 'vendor-3.7-flash', messages: chat }).finalChatCompletion()).choices[0]!.message;
    const follow = [...chat, answer as unknown as AnyMessage, { role: 'user', content: 'and again' } as AnyMessage];
    const replayed = await client.chat.completions.create({ model: 'vendor-3.7-flash', messages: follow });
    const sent = await client.chat.completions.create({ model: 'vendor-3.7-flash', messages: [...chat, { role: 'assistant', content: answer.content }, { role: 'user', content: 'and again' }] });
    assert.equal(replayed.usage!.prompt_tokens, sent.usage!.prompt_tokens, 'the replayed turn carries the whole text');
  });

  it('handles parallel calls of the same function, each answered by call id', async () => {
    const messages: AnyMessage[] = [{ role: 'user', content: 'Weather in three cities [sandbox:parallel=3]' }];
    const first = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages, tools: [weatherTool], tool_choice: 'required' });
    const message = first.choices[0]!.message as any;
    assert.equal(message.tool_calls.length, 3);
    assert.equal(new Set(message.tool_calls.map((c: any) => c.id)).size, 3);
    assert.ok(message.tool_calls[0].extra_content.vendor.thought_signature);
    assert.equal(message.tool_calls[1].extra_content.vendor.thought_signature, undefined, 'signatures are never invented');
    const results = message.tool_calls.map((c: any, i: number) => ({ role: 'tool', tool_call_id: c.id, content: `result ${i}` }));
    const second = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [...messages, message, ...results], tools: [weatherTool] });
    assert.match(second.choices[0]!.message.content!, /3 tool results/);
  });

  it('lists the three models in the OpenAI list shape', async () => {
    const page = await client.models.list();
    assert.deepEqual(page.data.map((m) => m.id), [...MODELS]);
    assert.equal((await client.models.retrieve('vendor-3.7-flash')).object, 'model');
    await assert.rejects(client.models.retrieve('gpt-4'), (e: any) => e.status === 404 && e.error.code === 'text.model_not_found');
  });

  it('settles every call of this suite (no hold left open)', async () => {
    const holds = await textHolds(t, account.workspaceId);
    assert.ok(holds.length > 0);
    for (const hold of holds) assert.notEqual(hold.status, 'open');
  });
});
