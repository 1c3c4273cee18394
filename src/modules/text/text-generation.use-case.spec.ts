import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GeminiResponse, ProviderRegistry, TextCall, TextProvider } from '../../../libs/providers/index.js';
import type { PriceCatalogue, WalletService } from '../billing/index.js';
import type { TextEvent } from './text-events.js';
import { TextGenerationUseCase } from './text-generation.use-case.js';
import type { TextMediaResolver } from './text-media.resolver.js';
import { translateTextRequest } from './translation/translate-request.js';

const chunk = (text: string, last = false, outputTokens = 2): GeminiResponse => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
  usageMetadata: { promptTokenCount: 3, candidatesTokenCount: outputTokens, totalTokenCount: 3 + outputTokens },
});
const call = (name: string): GeminiResponse => ({ candidates: [{ content: { role: 'model', parts: [{ functionCall: { name, args: {} } }] }, index: 0 }] });

/** The use case over stubs: a provider whose upstream reads are the given batches, and a wallet that records its calls. */
function useCase(reads: GeminiResponse[][], answer: GeminiResponse = chunk('whole', true)) {
  const wallet: string[] = [];
  const provider = {
    generate: async () => answer,
    stream: async (_call: TextCall) =>
      (async function* () {
        yield* reads;
      })(),
  } as unknown as TextProvider;
  const generation = new TextGenerationUseCase(
    { resolve: () => ({ provider }) } as unknown as ProviderRegistry,
    {
      hold: async () => (wallet.push('hold'), 'hold-1'),
      settle: async (_hold: string, amount: bigint) => void wallet.push(`settle ${amount}`),
      release: async () => void wallet.push('release'),
    } as unknown as WalletService,
    { resolve: () => null } as unknown as TextMediaResolver,
    // A charge of one per output token: what a settlement charged is the output it counted.
    { textCost: (_payer: unknown, _model: string, _input: number, outputTokens: number) => BigInt(outputTokens) } as unknown as PriceCatalogue,
  );
  return { generation, wallet };
}

const key = { id: 'key-1', workspaceId: 'ws-1', environment: 'live' as const };

/** The steps as the event types in each, with what the wallet had done when the step was yielded. */
async function steps(generation: TextGenerationUseCase, stream: boolean, wallet: string[], signal?: AbortSignal, onEvent?: (event: TextEvent) => void) {
  const seen: Array<{ types: TextEvent['type'][]; wallet: string }> = [];
  const translated = translateTextRequest('chat', { model: 'vendor-3.7-flash', messages: [{ role: 'user', content: 'hi' }], stream, max_tokens: 100 });
  for await (const step of generation.run(key, translated, { subjectId: 'chatcmpl-spec', signal })) {
    const types: TextEvent['type'][] = [];
    for (const event of step) {
      types.push(event.type);
      onEvent?.(event);
    }
    seen.push({ types, wallet: wallet.join(',') });
  }
  return seen;
}

describe('TextGenerationUseCase steps', () => {
  it('yields every chunk of one upstream read in one step, each followed by its tool calls, and settles before the last step', async () => {
    const { generation, wallet } = useCase([[chunk('a'), call('get_weather'), chunk('b')], [chunk('c', true)]]);
    assert.deepEqual(await steps(generation, true, wallet), [
      { types: ['started'], wallet: 'hold' },
      { types: ['delta', 'delta', 'tool_call', 'delta'], wallet: 'hold' },
      { types: ['delta'], wallet: 'hold' },
      { types: ['usage'], wallet: 'hold' },
      { types: ['settled'], wallet: 'hold,settle 2' },
    ]);
  });

  it('yields a whole answer and its usage in one step, then settled once charged', async () => {
    const { generation, wallet } = useCase([]);
    assert.deepEqual(await steps(generation, false, wallet), [
      { types: ['started', 'delta', 'usage'], wallet: 'hold' },
      { types: ['settled'], wallet: 'hold,settle 2' },
    ]);
  });

  it('a caller that leaves in the middle of a read is charged for the chunks it was given, not for the rest of the read', async () => {
    const { generation, wallet } = useCase([[chunk('a', false, 1), chunk('b', false, 40), chunk('c', true, 60)]]);
    const abort = new AbortController();
    const seen = await steps(generation, true, wallet, abort.signal, (event) => {
      if (event.type === 'delta') abort.abort();
    });
    assert.deepEqual(seen, [
      { types: ['started'], wallet: 'hold' },
      { types: ['delta'], wallet: 'hold' },
      { types: ['settled'], wallet: 'hold,settle 1' },
    ]);
  });
});
