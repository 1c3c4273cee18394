import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatAssembler, ResponsesAssembler, tokenUsage } from './gemini-to-openai.js';
import type { GeminiResponse } from '../../../../libs/providers/index.js';

/** Recorded shapes (UPSTREAM §1.7/§1.8): a parallel function-call turn and a streamed text answer. */
const PARALLEL_CALLS: GeminiResponse = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { functionCall: { id: 'fc-1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQBcsjafE0=' },
          { functionCall: { id: 'fc-2', name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 80, totalTokenCount: 140 },
  modelVersion: 'gemini-3.8-flash',
  responseId: 'r1',
};

const STREAM: GeminiResponse[] = [
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] }, index: 0 }], usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'lo!' }] }, index: 0 }], usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } },
  {
    candidates: [{ content: { role: 'model', parts: [{ text: '', thoughtSignature: 'c2lnbmF0dXJl' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, thoughtsTokenCount: 40, totalTokenCount: 52 },
  },
];

describe('ChatAssembler (Gemini → Chat)', () => {
  it('contentChunkJson is JSON.stringify of each content chunk, byte for byte (role, text, calls, signatures, with and without usage)', () => {
    for (const includeUsage of [false, true]) {
      const chat = new ChatAssembler('vendor-3.8-"flash"', includeUsage);
      for (const response of [...STREAM, PARALLEL_CALLS, { candidates: [{ content: { role: 'model', parts: [{ text: 'é\u2028"\\\n' }] }, index: 0 }] }]) {
        const chunk = chat.push(response);
        assert.ok(chunk);
        assert.equal(chat.contentChunkJson(chunk), JSON.stringify(chunk));
      }
    }
  });

  it('maps parallel calls with ids, signature only where the upstream put it, parts in providerMetadata', () => {
    const chat = new ChatAssembler('vendor-3.8-flash');
    chat.push(PARALLEL_CALLS);
    const completion = chat.completion(tokenUsage(PARALLEL_CALLS.usageMetadata)) as any;
    const message = completion.choices[0].message;
    assert.equal(completion.choices[0].finish_reason, 'tool_calls');
    assert.equal(message.content, null);
    assert.deepEqual(message.tool_calls, [
      { id: 'fc-1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { vendor: { thought_signature: 'CiQBcsjafE0=', function_call_id: 'fc-1' } } },
      { id: 'fc-2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' }, extra_content: { vendor: { function_call_id: 'fc-2' } } },
    ]);
    assert.deepEqual(message.providerMetadata.vendor.parts, PARALLEL_CALLS.candidates![0]!.content!.parts);
    assert.deepEqual(completion.usage, {
      prompt_tokens: 40,
      completion_tokens: 100,
      total_tokens: 140,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 80, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
  });

  it('streams deltas: role first, content, the signature-only part kept in providerMetadata, then finish', () => {
    const chat = new ChatAssembler('vendor-3.8-flash', true);
    const chunks = STREAM.map((r) => chat.push(r) as any);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks[0].choices[0].delta.content, 'Hel');
    assert.equal(chunks[1].choices[0].delta.role, undefined);
    assert.equal(chunks[2].choices[0].delta.content, undefined);
    assert.deepEqual(chunks[2].choices[0].delta.providerMetadata, { vendor: { parts: [{ text: '', thoughtSignature: 'c2lnbmF0dXJl' }] } });
    assert.equal(chunks[0].usage, null);
    const finish = chat.finishChunk() as any;
    assert.deepEqual(finish.choices[0].delta, {});
    assert.equal(finish.choices[0].finish_reason, 'stop');
    assert.deepEqual((chat.usageChunk(tokenUsage(chat.track.usage)) as any).choices, []);
  });

  it('maps MAX_TOKENS to length and safety to content_filter', () => {
    const chat = new ChatAssembler('m');
    chat.push({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'MAX_TOKENS' }] });
    assert.equal(chat.finishReason, 'length');
    const blocked = new ChatAssembler('m');
    blocked.push({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5 } });
    assert.equal(blocked.finishReason, 'content_filter');
  });
});

describe('ResponsesAssembler (Gemini → Responses)', () => {
  it('emits the canonical text sequence with increasing sequence numbers and stable ids', () => {
    const responses = new ResponsesAssembler('vendor-3.8-flash', {});
    const events = [...responses.start(), ...STREAM.flatMap((r) => responses.push(r)), ...responses.finishItems(), responses.terminal(tokenUsage(STREAM[2]!.usageMetadata))];
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    events.forEach((e, i) => assert.equal(e.sequence_number, i));
    const done = events[8] as any;
    assert.deepEqual(done.item.providerMetadata.vendor.parts, [{ text: 'Hel' }, { text: 'lo!' }, { text: '', thoughtSignature: 'c2lnbmF0dXJl' }]);
    const completed = (events[9] as any).response;
    assert.equal(completed.output_text, 'Hello!');
    assert.equal(completed.usage.output_tokens, 43);
  });

  it('gives each function call its own item with one complete arguments delta', () => {
    const responses = new ResponsesAssembler('vendor-3.8-flash', {});
    const events = [...responses.push(PARALLEL_CALLS), ...responses.finishItems()];
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta') as any[];
    assert.deepEqual(deltas.map((d) => d.delta), ['{"city":"Paris"}', '{"city":"Rome"}']);
    const output = responses.response('completed', null).output as any[];
    assert.deepEqual(output.map((o) => [o.type, o.call_id, o.providerMetadata.vendor.parts.length]), [
      ['function_call', 'fc-1', 1],
      ['function_call', 'fc-2', 1],
    ]);
    assert.equal(output[0].providerMetadata.vendor.parts[0].thoughtSignature, 'CiQBcsjafE0=');
    assert.equal(output[1].providerMetadata.vendor.parts[0].thoughtSignature, undefined);
  });
});
