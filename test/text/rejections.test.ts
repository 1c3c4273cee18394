import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type OpenAI from 'openai';
import { createAccount, type TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { openaiFor, openaiSuite, textHolds } from './text-helpers.js';

const user = [{ role: 'user', content: 'hi' }];
const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };

/** [name, operation, body, status, code] */
const CASES: Array<[string, 'chat' | 'responses', Record<string, unknown>, number, string]> = [
  ['parallel_tool_calls: false (chat)', 'chat', { model: 'vendor-3.8-flash', messages: user, tools: [tool], parallel_tool_calls: false }, 422, 'text.parallel_tool_calls_unsupported'],
  ['parallel_tool_calls: false (responses)', 'responses', { model: 'vendor-3.8-flash', input: 'hi', parallel_tool_calls: false }, 422, 'text.parallel_tool_calls_unsupported'],
  ['background: true', 'responses', { model: 'vendor-3.8-flash', input: 'hi', background: true }, 422, 'text.background_unsupported'],
  ['reasoning_effort minimal on 3.8', 'chat', { model: 'vendor-3.8-flash', messages: user, reasoning_effort: 'minimal' }, 422, 'text.reasoning_effort_unsupported'],
  ['reasoning_effort minimal on 3.7', 'responses', { model: 'vendor-3.7-flash', input: 'hi', reasoning_effort: 'minimal' }, 422, 'text.reasoning_effort_unsupported'],
  ['reasoning.effort unknown level', 'responses', { model: 'vendor-3.5-flash-lite', input: 'hi', reasoning: { effort: 'xhigh' } }, 422, 'text.reasoning_effort_unsupported'],
  ['thinkingBudget on 3.8', 'chat', { model: 'vendor-3.8-flash', messages: user, providerOptions: { vendor: { generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } } } }, 422, 'text.thinking_budget_unsupported'],
  ['frequency_penalty on lite', 'chat', { model: 'vendor-3.5-flash-lite', messages: user, frequency_penalty: 0.5 }, 422, 'text.penalties_unsupported'],
  ['presence_penalty on lite', 'chat', { model: 'vendor-3.5-flash-lite', messages: user, presence_penalty: 0.1 }, 422, 'text.penalties_unsupported'],
  ['final assistant message on lite', 'chat', { model: 'vendor-3.5-flash-lite', messages: [...user, { role: 'assistant', content: 'prefill' }] }, 422, 'text.final_assistant_message_unsupported'],
  ['final assistant item on lite (responses)', 'responses', { model: 'vendor-3.5-flash-lite', input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'prefill' }] }, 422, 'text.final_assistant_message_unsupported'],
  ['gs:// image (chat)', 'chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'gs://bucket/cat.png' } }] }] }, 422, 'text.gcs_uri_unsupported'],
  ['gs:// input_file (chat)', 'chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'gs://bucket/o.pdf' } }] }] }, 422, 'text.gcs_uri_unsupported'],
  ['gs:// input_audio (chat)', 'chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'gs://bucket/a.wav', format: 'wav' } }] }] }, 422, 'text.gcs_uri_unsupported'],
  ['gs:// input_file (responses)', 'responses', { model: 'vendor-3.8-flash', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'gs://b/o.pdf' }] }] }, 422, 'text.gcs_uri_unsupported'],
  ['gs:// video (responses)', 'responses', { model: 'vendor-3.8-flash', input: [{ role: 'user', content: [{ type: 'input_video', video_url: 'gs://bucket/clip.mp4' }] }] }, 422, 'text.gcs_uri_unsupported'],
  ['streamFunctionCallArguments: true', 'chat', { model: 'vendor-3.8-flash', messages: user, providerOptions: { vendor: { toolConfig: { functionCallingConfig: { streamFunctionCallArguments: true } } } } }, 422, 'text.stream_function_call_arguments_unsupported'],
  ['stream_function_call_arguments: true (snake_case)', 'responses', { model: 'vendor-3.8-flash', input: 'hi', providerOptions: { vendor: { tool_config: { function_calling_config: { stream_function_call_arguments: true } } } } }, 422, 'text.stream_function_call_arguments_unsupported'],
  ['thinking_budget on 3.8 (snake_case)', 'chat', { model: 'vendor-3.8-flash', messages: user, providerOptions: { vendor: { generationConfig: { thinking_config: { thinking_budget: 1024 } } } } }, 422, 'text.thinking_budget_unsupported'],
  ['frequency_penalty in the vendor block on lite (snake_case)', 'chat', { model: 'vendor-3.5-flash-lite', messages: user, providerOptions: { vendor: { generation_config: { frequency_penalty: 1 } } } }, 422, 'text.penalties_unsupported'],
  ['candidate_count 2 in the vendor block', 'chat', { model: 'vendor-3.8-flash', messages: user, providerOptions: { vendor: { generationConfig: { candidate_count: 2 } } } }, 422, 'text.candidate_count_unsupported'],
  ['tool_choice naming an undeclared function', 'chat', { model: 'vendor-3.8-flash', messages: user, tools: [tool], tool_choice: { type: 'function', function: { name: 'other' } } }, 400, 'text.tool_choice_undeclared'],
  ['tool_choice undeclared (responses)', 'responses', { model: 'vendor-3.8-flash', input: 'hi', tool_choice: { type: 'function', name: 'nothing' } }, 400, 'text.tool_choice_undeclared'],
  ['top_p above 1', 'chat', { model: 'vendor-3.8-flash', messages: user, top_p: 1.5 }, 400, 'text.invalid_field'],
  ['top_p below 0', 'responses', { model: 'vendor-3.8-flash', input: 'hi', top_p: -0.1 }, 400, 'text.invalid_field'],
  ['top_k 0', 'chat', { model: 'vendor-3.8-flash', messages: user, top_k: 0 }, 400, 'text.invalid_field'],
  ['max_tokens 0', 'chat', { model: 'vendor-3.8-flash', messages: user, max_tokens: 0 }, 400, 'text.invalid_field'],
  ['max_completion_tokens not an integer', 'chat', { model: 'vendor-3.8-flash', messages: user, max_completion_tokens: 1.5 }, 400, 'text.invalid_field'],
  ['unknown model', 'chat', { model: 'gpt-4o', messages: user }, 400, 'text.unknown_model'],
  ['missing model', 'responses', { input: 'hi' }, 400, 'text.invalid_field'],
  ['empty messages', 'chat', { model: 'vendor-3.8-flash', messages: [] }, 400, 'text.invalid_field'],
  ['n = 2', 'chat', { model: 'vendor-3.8-flash', messages: user, n: 2 }, 422, 'text.candidate_count_unsupported'],
  ['fps above 24', 'chat', { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'input_video', video_url: 'data:video/mp4;base64,AAAA', fps: 30 }] }] }, 400, 'text.invalid_field'],
  ['tool result for an unknown call id', 'chat', { model: 'vendor-3.8-flash', messages: [...user, { role: 'tool', tool_call_id: 'nope', content: 'x' }] }, 400, 'text.unknown_tool_call'],
];

describe('text rejections: 4xx {error:{code,message}} before any hold', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  openaiSuite({ label: 'text-rejections', creditUsd: 5 }, (booted) => ({ t, account, client } = booted));

  for (const [name, operation, body, status, code] of CASES) {
    it(`refuses ${name} with ${status} ${code}`, async () => {
      for (const stream of [false, true]) {
        const call = operation === 'chat' ? client.chat.completions.create({ ...body, stream } as any) : client.responses.create({ ...body, stream } as any);
        await assert.rejects(call, (error: any) => {
          assert.equal(error.status, status, `stream=${stream}`);
          assert.equal(error.error?.code, code);
          assert.equal(typeof error.error?.message, 'string');
          return true;
        });
      }
    });
  }

  it('ignores custom sampling on the lite model (accepted, not sent upstream)', async () => {
    const completion = await client.chat.completions.create({ model: 'vendor-3.5-flash-lite', messages: [{ role: 'user', content: 'hi' }], temperature: 1.3, top_p: 0.5 });
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  it('answers 402 when the wallet cannot cover the hold, and 401 without a key', async () => {
    const poor = await createAccount(t, { creditUsd: 0.01 });
    await assert.rejects(
      openaiFor(t, poor.key).chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'hi' }] }),
      (e: any) => e.status === 402 && e.error.code === 'text.insufficient_balance',
    );
    const response = await t.request('/api/svc/v1/chat/completions', { method: 'POST', json: { model: 'vendor-3.8-flash', messages: user } });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as any).error.code, 'text.unauthorized');
  });

  it('made no hold for any rejected request', async () => {
    const holds = await textHolds(t, account.workspaceId);
    assert.equal(holds.length, 1, 'only the accepted lite call held money');
  });
});
