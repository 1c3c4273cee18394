import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../../libs/common/index.js';
import { estimateInputTokens } from './hold-estimate.js';
import { pendingMediaUrls } from './media-parts.js';
import { translateTextRequest } from './translate-request.js';

const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return `${error.status} ${error.code}`;
    throw error;
  }
  return 'accepted';
};

describe('translateTextRequest (Chat → Gemini)', () => {
  it('maps system/developer to systemInstruction, sampling and limits to generationConfig, reasoning to thinkingLevel', () => {
    const { gemini, maxOutputTokens, stream, includeUsage } = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric.' }] },
        { role: 'user', content: 'hi' },
      ],
      temperature: 0.4,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 300,
      stop: 'END',
      seed: 7,
      frequency_penalty: 0.1,
      reasoning_effort: 'high',
      stream: true,
      stream_options: { include_usage: true },
      user: 'ignored',
      logprobs: false,
    });
    assert.deepEqual(gemini.systemInstruction, { parts: [{ text: 'Be brief.' }, { text: 'Use metric.' }] });
    assert.deepEqual(gemini.contents, [{ role: 'user', parts: [{ text: 'hi' }] }]);
    assert.deepEqual(gemini.generationConfig, {
      temperature: 0.4,
      topP: 0.9,
      topK: 20,
      maxOutputTokens: 300,
      stopSequences: ['END'],
      seed: 7,
      frequencyPenalty: 0.1,
      candidateCount: 1,
      thinkingConfig: { thinkingLevel: 'HIGH' },
    });
    assert.equal(maxOutputTokens, 300);
    assert.equal(stream, true);
    assert.equal(includeUsage, true);
  });

  it('defaults the thinking level per model and drops custom sampling on the lite model', () => {
    assert.equal(translateTextRequest('chat', { model: 'vendor-3.7-flash', messages: [{ role: 'user', content: 'x' }] }).gemini.generationConfig!.thinkingConfig!.thinkingLevel, 'MEDIUM');
    const lite = translateTextRequest('chat', { model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'x' }], temperature: 1, top_p: 0.2, top_k: 3 });
    assert.equal(lite.gemini.generationConfig!.thinkingConfig!.thinkingLevel, 'MINIMAL');
    assert.equal(lite.gemini.generationConfig!.temperature, undefined);
    assert.equal(lite.gemini.generationConfig!.topP, undefined);
    assert.equal(lite.gemini.generationConfig!.topK, undefined);
    // Ignored means not judged either (temperature has no spec range); top_p keeps its spec limit.
    assert.equal(translateTextRequest('chat', { model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }).gemini.generationConfig!.temperature, undefined);
    assert.throws(() => translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }), /temperature: must be between 0 and 2/);
    assert.throws(() => translateTextRequest('chat', { model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'x' }], top_p: 1.5 }), /top_p: must be between 0 and 1/);
  });

  it('translates image, video (fps, offsets, mediaResolution), audio and input_file parts', () => {
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'input_video', video_url: 'https://cdn.example.com/clip.mp4', fps: 2, startOffset: 1.5, endOffset: '10s', mediaResolution: 'low' },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'file', file: { file_data: 'data:text/plain,hello%20world', filename: 'a.txt' } },
            { type: 'text', text: 'describe' },
          ],
        },
      ],
    });
    assert.deepEqual(gemini.contents[0]!.parts, [
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' }, mediaResolution: { level: 'MEDIA_RESOLUTION_HIGH' } },
      {
        fileData: { fileUri: 'https://cdn.example.com/clip.mp4', mimeType: 'video/mp4' },
        videoMetadata: { fps: 2, startOffset: '1.5s', endOffset: '10s' },
        mediaResolution: { level: 'MEDIA_RESOLUTION_LOW' },
      },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('hello world').toString('base64') } },
      { text: 'describe' },
    ]);
    assert.equal(pendingMediaUrls(gemini).length, 1);
    assert.ok(estimateInputTokens(gemini) > 4 * 1120);
  });

  it('maps nested tools, tool_choice and structured output; vendor options merge with normalized fields winning', () => {
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.7-flash',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      temperature: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' } } },
      providerOptions: {
        vendor: {
          generationConfig: { temperature: 1.5, responseModalities: ['TEXT'], thinkingConfig: { includeThoughts: true } },
          safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
          tools: [{ codeExecution: {} }],
          toolConfig: { functionCallingConfig: { mode: 'AUTO' }, retrievalConfig: { languageCode: 'en' } },
        },
      },
    });
    assert.deepEqual(gemini.tools, [
      { functionDeclarations: [{ name: 'get_weather', description: 'w', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] },
      { codeExecution: {} },
    ]);
    assert.deepEqual(gemini.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] }, retrievalConfig: { languageCode: 'en' } });
    assert.equal(gemini.generationConfig!.temperature, 0.2);
    assert.deepEqual(gemini.generationConfig!.responseModalities, ['TEXT']);
    assert.equal(gemini.generationConfig!.responseMimeType, 'application/json');
    assert.deepEqual(gemini.generationConfig!.responseJsonSchema, { type: 'object' });
    assert.deepEqual(gemini.generationConfig!.thinkingConfig, { includeThoughts: true, thinkingLevel: 'MEDIUM' });
    assert.equal(gemini.safetySettings!.length, 1);
  });

  it('replays assistant tool calls with signatures and native ids, and matches tool results by call id', () => {
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [
        { role: 'user', content: 'weather in two cities' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'a1', type: 'function', function: { name: 'w', arguments: '{"city":"A"}' }, extra_content: { vendor: { thought_signature: 'U0lHMQ==', function_call_id: 'a1' } } },
            { id: 'call_x', type: 'function', function: { name: 'w', arguments: '{"city":"B"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_x', content: 'rain' },
        { role: 'tool', tool_call_id: 'a1', content: [{ type: 'text', text: '{"t":20}' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      ],
    });
    assert.deepEqual(gemini.contents[1], {
      role: 'model',
      parts: [{ functionCall: { name: 'w', args: { city: 'A' }, id: 'a1' }, thoughtSignature: 'U0lHMQ==' }, { functionCall: { name: 'w', args: { city: 'B' } } }],
    });
    // The results in the order of the calls (sent in the other order): Gemini pairs the one
    // without a native id by position.
    assert.deepEqual(gemini.contents[2], {
      role: 'user',
      parts: [
        { functionResponse: { name: 'w', id: 'a1', response: { t: 20 }, parts: [{ inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } },
        { functionResponse: { name: 'w', response: { output: 'rain' } } },
      ],
    });
  });

  it('puts the results of parallel same-name calls without native ids in the order of the calls, in both operations', () => {
    const chat = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_r', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_r', content: 'result for Rome' },
        { role: 'tool', tool_call_id: 'call_p', content: 'result for Paris' },
        { role: 'user', content: 'and now?' },
      ],
    });
    const inOrder = {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { output: 'result for Paris' } } },
        { functionResponse: { name: 'get_weather', response: { output: 'result for Rome' } } },
      ],
    };
    assert.deepEqual(chat.gemini.contents[2], inOrder);
    assert.deepEqual(chat.gemini.contents[3], { role: 'user', parts: [{ text: 'and now?' }] });
    const responses = translateTextRequest('responses', {
      model: 'vendor-3.8-flash',
      input: [
        { role: 'user', content: 'weather in Paris and Rome' },
        { type: 'function_call', call_id: 'call_p', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_r', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_r', output: 'result for Rome' },
        { type: 'function_call_output', call_id: 'call_p', output: 'result for Paris' },
      ],
    });
    assert.deepEqual(responses.gemini.contents[2], inOrder);
  });

  it('takes one result per call: a second result, a later message before every call has one, or a reused call id is refused', () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{}' } });
    const chatWith = (messages: unknown[]) => () => translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'weather?' }, ...messages] });
    const assistant = (...ids: string[]) => ({ role: 'assistant', content: null, tool_calls: ids.map(call) });
    const tool = (id: string) => ({ role: 'tool', tool_call_id: id, content: 'sunny' });
    assert.equal(code(chatWith([assistant('a', 'b'), tool('b'), tool('a'), { role: 'user', content: 'thanks' }])), 'accepted');
    assert.equal(code(chatWith([assistant('a'), tool('a'), tool('a')])), '400 text.invalid_field');
    assert.equal(code(chatWith([assistant('a', 'b'), tool('a'), { role: 'user', content: 'thanks' }])), '400 text.invalid_field');
    assert.equal(code(chatWith([assistant('a'), { role: 'user', content: 'never mind' }])), '400 text.invalid_field');
    assert.equal(code(chatWith([assistant('a'), assistant('b')])), '400 text.invalid_field');
    assert.equal(code(chatWith([assistant('a', 'a')])), '400 text.invalid_field');
    // A system message may stand between the calls and their results.
    assert.equal(code(chatWith([assistant('a'), { role: 'system', content: 's' }, tool('a')])), 'accepted');

    const responsesWith = (input: unknown[]) => () => translateTextRequest('responses', { model: 'vendor-3.8-flash', input: [{ role: 'user', content: 'weather?' }, ...input] });
    const fc = (id: string) => ({ type: 'function_call', call_id: id, name: 'get_weather', arguments: '{}' });
    const out = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'sunny' });
    const said = { role: 'assistant', content: [{ type: 'output_text', text: 'let me look' }] };
    assert.equal(code(responsesWith([said, fc('a'), fc('b'), out('b'), out('a'), fc('c'), out('c')])), 'accepted');
    assert.equal(code(responsesWith([fc('a'), out('a'), out('a')])), '400 text.invalid_field');
    assert.equal(code(responsesWith([fc('a'), fc('b'), out('a'), { role: 'user', content: 'thanks' }])), '400 text.invalid_field');
    assert.equal(code(responsesWith([fc('a'), fc('b'), out('a'), fc('c')])), '400 text.invalid_field');
    assert.equal(code(responsesWith([fc('a'), fc('a')])), '400 text.invalid_field');
    assert.equal(code(() => translateTextRequest('responses', { model: 'vendor-3.8-flash', input: '' })), '400 text.invalid_field');
  });

  it('gives replayed providerMetadata.vendor.parts precedence over reconstructed content, byte for byte', () => {
    const parts = [
      { text: 'thinking', thought: true },
      { executableCode: { language: 'PYTHON', code: 'print(1)' } },
      { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1\n' } },
      { text: 'done', thoughtSignature: 'c2ln' },
    ];
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: 'something else entirely', providerMetadata: { vendor: { parts } } },
        { role: 'user', content: 'y' },
      ],
    });
    assert.deepEqual(gemini.contents[1], { role: 'model', parts });
  });

  it('holds replayed file references to the media rules: https fetched by the service, data inlined, other schemes refused', () => {
    const withParts = (parts: unknown[]) => () =>
      translateTextRequest('chat', {
        model: 'vendor-3.8-flash',
        messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'a', providerMetadata: { vendor: { parts } } }, { role: 'user', content: 'y' }],
      });
    const https = withParts([{ text: 'a' }, { fileData: { mimeType: 'image/png', fileUri: 'https://media.example/cat.png' } }])();
    assert.deepEqual(pendingMediaUrls(https.gemini).map((p) => p.fileData!.fileUri), ['https://media.example/cat.png']);
    const data = withParts([{ text: 'a' }, { fileData: { mimeType: 'text/plain', fileUri: 'data:text/plain;base64,aGk=' } }])();
    assert.deepEqual(data.gemini.contents[1]!.parts[1], { inlineData: { mimeType: 'text/plain', data: 'aGk=' } });
    for (const uri of ['file:///etc/passwd', 'ftp://x', ' https://x', 'javascript:alert(1)', 'data:;base64,%%%']) {
      assert.equal(code(withParts([{ text: 'a' }, { fileData: { fileUri: uri } }])), '400 text.invalid_field', uri);
    }
    assert.equal(code(withParts([{ text: 'a' }, { fileData: { fileUri: 'gs://b/o' } }])), '422 text.gcs_uri_unsupported');
    assert.equal(code(withParts([{ text: 'a' }, { file_data: { file_uri: 'https://x/y' } }])), '400 text.invalid_field');
    const inResult = [{ text: 'a' }, { functionResponse: { name: 'f', response: {}, parts: [{ fileData: { fileUri: 'file:///etc/shadow' } }] } }];
    assert.equal(code(withParts(inResult)), '400 text.invalid_field');
  });
  it('reads snake_case vendor keys as Gemini camelCase at every configuration level, values untouched', () => {
    const schema = { type: 'object', properties: { first_name: { type: 'string' } } };
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.7-flash',
      messages: [{ role: 'user', content: 'x' }],
      providerOptions: {
        vendor: {
          generation_config: { response_modalities: ['TEXT'], response_mime_type: 'application/json', response_json_schema: schema, thinking_config: { include_thoughts: true, thinking_budget: 512 } },
          safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
          tools: [{ code_execution: {} }, { computer_use: { environment: 'ENVIRONMENT_BROWSER', excluded_predefined_functions: ['drag_and_drop'] } }],
          tool_config: { function_calling_config: { mode: 'ANY', allowed_function_names: ['click_at'] } },
        },
      },
    });
    assert.deepEqual(gemini.generationConfig, {
      responseModalities: ['TEXT'],
      responseMimeType: 'application/json',
      responseJsonSchema: schema, // the schema's own property names are data: kept as sent
      thinkingConfig: { includeThoughts: true, thinkingBudget: 512 },
      candidateCount: 1,
    });
    assert.deepEqual(gemini.safetySettings, [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }]);
    assert.deepEqual(gemini.tools, [{ codeExecution: {} }, { computerUse: { environment: 'ENVIRONMENT_BROWSER', excludedPredefinedFunctions: ['drag_and_drop'] } }]);
    assert.deepEqual(gemini.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['click_at'] } });
  });

  it('lets an explicit format and tool_choice win over the vendor block', () => {
    const vendor = {
      generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT' } },
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } },
    };
    const tools = [{ type: 'function', function: { name: 'get_time' } }];
    const plain = translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'none', response_format: { type: 'text' }, providerOptions: { vendor } });
    assert.equal(plain.gemini.generationConfig!.responseMimeType, undefined);
    assert.equal(plain.gemini.generationConfig!.responseSchema, undefined);
    assert.deepEqual(plain.gemini.toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    const json = translateTextRequest('responses', { model: 'vendor-3.8-flash', input: 'x', text: { format: { type: 'json_object' } }, providerOptions: { vendor } });
    assert.equal(json.gemini.generationConfig!.responseMimeType, 'application/json');
    assert.equal(json.gemini.generationConfig!.responseSchema, undefined);
    // tool_choice "required" (ANY) keeps the vendor's narrower list of allowed names.
    const required = translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'required', providerOptions: { vendor } });
    assert.deepEqual(required.gemini.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } });
  });

  it('accepts the flat named tool_choice ({type, name}) in Chat as in Responses', () => {
    const { gemini } = translateTextRequest('chat', {
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'get_time' } }],
      tool_choice: { type: 'function', name: 'get_time' },
    });
    assert.deepEqual(gemini.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] } });
  });
});

describe('translateTextRequest (Responses → Gemini)', () => {
  it('maps instructions, flat tools, function_call items with providerMetadata and function_call_output', () => {
    const signed = { functionCall: { id: 'n1', name: 'w', args: { city: 'A' } }, thoughtSignature: 'c2ln' };
    const { gemini } = translateTextRequest('responses', {
      model: 'vendor-3.8-flash',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'weather' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'n1', name: 'w', arguments: '{"city":"A"}', providerMetadata: { vendor: { parts: [signed] } } },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'w', arguments: '{"city":"B"}' },
        { type: 'function_call_output', call_id: 'n1', output: 'sun' },
        { type: 'function_call_output', call_id: 'call_2', output: 'rain' },
      ],
      tools: [{ type: 'function', name: 'w', parameters: { type: 'object' } }],
      tool_choice: 'required',
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_object' } },
      max_output_tokens: 99,
    });
    assert.deepEqual(gemini.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    assert.deepEqual(gemini.contents[1], { role: 'model', parts: [signed, { functionCall: { name: 'w', args: { city: 'B' } } }] });
    assert.deepEqual(gemini.contents[2]!.parts, [
      { functionResponse: { id: 'n1', name: 'w', response: { output: 'sun' } } },
      { functionResponse: { name: 'w', response: { output: 'rain' } } },
    ]);
    assert.deepEqual(gemini.toolConfig, { functionCallingConfig: { mode: 'ANY' } });
    assert.equal(gemini.generationConfig!.thinkingConfig!.thinkingLevel, 'LOW');
    assert.equal(gemini.generationConfig!.responseMimeType, 'application/json');
    assert.equal(gemini.generationConfig!.maxOutputTokens, 99);
  });
});

describe('translateTextRequest rejections', () => {
  const chat = (extra: Record<string, unknown>, model = 'vendor-3.8-flash') => () =>
    translateTextRequest('chat', { model, messages: [{ role: 'user', content: 'x' }], ...extra });
  it('refuses every rule of the spec with its code', () => {
    assert.equal(code(chat({ parallel_tool_calls: false })), '422 text.parallel_tool_calls_unsupported');
    assert.equal(code(() => translateTextRequest('responses', { model: 'vendor-3.8-flash', input: 'x', background: true })), '422 text.background_unsupported');
    assert.equal(code(chat({ reasoning_effort: 'minimal' })), '422 text.reasoning_effort_unsupported');
    assert.equal(code(chat({ reasoning_effort: 'minimal' }, 'vendor-3.7-flash')), '422 text.reasoning_effort_unsupported');
    assert.equal(code(chat({ reasoning_effort: 'minimal' }, 'vendor-3.5-flash-lite')), 'accepted');
    assert.equal(code(chat({ providerOptions: { vendor: { generationConfig: { thinkingConfig: { thinkingLevel: 'MINIMAL' } } } } })), '422 text.reasoning_effort_unsupported');
    assert.equal(code(chat({ providerOptions: { vendor: { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } } } })), '422 text.thinking_budget_unsupported');
    assert.equal(code(chat({ providerOptions: { vendor: { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } } } }, 'vendor-3.7-flash')), 'accepted');
    assert.equal(code(chat({ presence_penalty: 0 }, 'vendor-3.5-flash-lite')), '422 text.penalties_unsupported');
    assert.equal(code(chat({ presence_penalty: 0 })), 'accepted');
    assert.equal(code(() => translateTextRequest('chat', { model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }, { role: 'system', content: 's' }] })), '422 text.final_assistant_message_unsupported');
    assert.equal(code(chat({ messages: [{ role: 'user', content: [{ type: 'input_file', file_url: 'gs://b/f.pdf' }] }] })), '422 text.gcs_uri_unsupported');
    assert.equal(code(chat({ providerOptions: { vendor: { toolConfig: { functionCallingConfig: { streamFunctionCallArguments: true } } } } })), '422 text.stream_function_call_arguments_unsupported');
    assert.equal(code(chat({ tool_choice: { type: 'function', function: { name: 'nope' } } })), '400 text.tool_choice_undeclared');
    assert.equal(code(chat({ top_p: 1.01 })), '400 text.invalid_field');
    assert.equal(code(chat({ top_k: 0.5 })), '400 text.invalid_field');
    assert.equal(code(chat({ max_tokens: 65_537 })), '400 text.invalid_field');
    assert.equal(code(chat({ model: 'vendor-9' })), '400 text.unknown_model');
    assert.equal(code(chat({ n: 3 })), '422 text.candidate_count_unsupported');
    assert.equal(code(chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] })), '400 text.invalid_field');
    assert.equal(code(chat({ providerOptions: { vendor: { cachedContent: 'x' } } })), '400 text.invalid_field');
  });

  it("holds the vendor block's sampling to the spec's limits, and sizes the hold by its output cap", () => {
    const generation = (g: Record<string, unknown>, extra: Record<string, unknown> = {}) => chat({ providerOptions: { vendor: { generationConfig: g } }, ...extra });
    for (const g of [{ topK: 0 }, { topK: 1.5 }, { topP: 2 }, { topP: -0.1 }, { topP: '0.5' }, { maxOutputTokens: -5 }, { maxOutputTokens: 0 }, { maxOutputTokens: 1e9 }, { maxOutputTokens: 65_537 }, { max_output_tokens: 1e9 }, { top_k: 0 }]) {
      assert.equal(code(generation(g)), '400 text.invalid_field', JSON.stringify(g));
    }
    // Checked also when max_tokens is given (which wins as the cap).
    assert.equal(code(generation({ topP: 2 }, { max_tokens: 10 })), '400 text.invalid_field');
    assert.equal(code(generation({ topK: 1, topP: 0, maxOutputTokens: 65_536 })), 'accepted');
    const capped = translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], providerOptions: { vendor: { generationConfig: { maxOutputTokens: 100 } } } });
    assert.equal(capped.maxOutputTokens, 100);
    assert.equal(capped.gemini.generationConfig!.maxOutputTokens, 100);
    const explicit = translateTextRequest('chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], max_tokens: 50, providerOptions: { vendor: { generationConfig: { maxOutputTokens: 100 } } } });
    assert.equal(explicit.maxOutputTokens, 50);
    assert.equal(explicit.gemini.generationConfig!.maxOutputTokens, 50);
  });

  it('applies the same rules to snake_case spellings inside providerOptions.vendor', () => {
    const vendor = (v: Record<string, unknown>) => ({ providerOptions: { vendor: v } });
    assert.equal(code(chat(vendor({ tool_config: { function_calling_config: { stream_function_call_arguments: true } } }))), '422 text.stream_function_call_arguments_unsupported');
    assert.equal(code(chat(vendor({ toolConfig: { functionCallingConfig: { stream_function_call_arguments: true } } }))), '422 text.stream_function_call_arguments_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { thinkingConfig: { thinking_budget: 1024 } } }))), '422 text.thinking_budget_unsupported');
    assert.equal(code(chat(vendor({ generation_config: { thinking_config: { thinking_budget: 1024 } } }))), '422 text.thinking_budget_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { thinkingConfig: { thinking_level: 'minimal' } } }))), '422 text.reasoning_effort_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { frequency_penalty: 1 } }), 'vendor-3.5-flash-lite')), '422 text.penalties_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { candidate_count: 2 } }))), '422 text.candidate_count_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { candidateCount: 2 } }))), '422 text.candidate_count_unsupported');
    assert.equal(code(chat(vendor({ generationConfig: { candidateCount: 1 } }))), 'accepted');
    assert.equal(code(chat(vendor({ generationConfig: { topK: 3, top_k: 4 } }))), '400 text.invalid_field');
    assert.equal(code(chat(vendor({ cached_content: 'x' }))), '400 text.invalid_field');
    // The lite model ignores custom sampling whichever spelling carried it.
    const lite = translateTextRequest('chat', { model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'x' }], ...vendor({ generationConfig: { top_k: 3, top_p: 0.5 } }) });
    assert.equal(lite.gemini.generationConfig!.topK, undefined);
    assert.equal(lite.gemini.generationConfig!.topP, undefined);
  });
});
