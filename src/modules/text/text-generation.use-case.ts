import { Injectable, Logger } from '@nestjs/common';
import { DomainError } from '../../../libs/common/index.js';
import {
  type GeminiResponse,
  NoLiveAdapterError,
  ProviderRegistry,
  type TextModelId,
  type TextProvider,
  TextUpstreamError,
} from '../../../libs/providers/index.js';
import { type HoldInput, type IfUnrecorded, PriceCatalogue, type PriceContext, WalletService } from '../billing/index.js';
import type { AuthenticatedKey } from '../identity/index.js';
import type { TextEvent } from './text-events.js';
import { TextErrorCode } from './text-errors.js';
import { TextMediaResolver } from './text-media.resolver.js';
import { TEXT_HOLD_SUBJECT } from './text.constants.js';
import { type TokenUsage, tokenUsage, UpstreamTrack } from './translation/gemini-to-openai.js';
import { estimateInputTokens } from './translation/hold-estimate.js';
import type { TranslatedTextRequest } from './translation/translated-request.js';
import { toDomainError } from './upstream-error-mapping.js';

export interface TextRun {
  /** The id the client will see for this answer; the hold's subject. */
  subjectId: string;
  /** Aborting it means the caller left: the upstream call is cancelled and the output so far charged. */
  signal?: AbortSignal;
}

interface Prepared {
  translated: TranslatedTextRequest;
  provider: TextProvider;
  holdId: string;
  /** What the hold was made with: settling a hold a database crash lost charges from it (WalletService.settle). */
  held: HoldInput;
  estimatedInputTokens: number;
  /** Who pays: the hold and the charge are priced for the same workspace and key. */
  payer: PriceContext;
  /** Every upstream chunk goes through it: usage, and how much was produced, for charging. */
  track: UpstreamTrack;
}

/**
 * Text generation without a transport: takes a validated, translated request and yields
 * TextEvents (text-events.ts). Route (before the media fetch) → fetch HTTPS media → hold the
 * input estimate plus the output cap → call the upstream → settle on the upstream's reported
 * usage before yielding `settled`, so a transport sends its terminal event only once the answer
 * is paid for. The consumer's pace is the upstream's: the next chunk is read only when it asks.
 */
@Injectable()
export class TextGenerationUseCase {
  private readonly logger = new Logger(TextGenerationUseCase.name);

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly wallet: WalletService,
    private readonly media: TextMediaResolver,
    private readonly prices: PriceCatalogue,
  ) {}

  /**
   * Streams when the request asked for it (`stream: true`), else one delta with the whole answer.
   * The generator of the mode itself, not one delegating to it: every event crosses one generator.
   * It yields the events in order, in steps: the events of one step come together (a streamed
   * step is one upstream read, its deltas and tool calls), so a step costs the transport one async
   * iteration however many chunks the read carried, not one per chunk.
   */
  run(key: AuthenticatedKey, translated: TranslatedTextRequest, run: TextRun): AsyncGenerator<Iterable<TextEvent>> {
    return translated.stream ? this.stream(key, translated, run) : this.once(key, translated, run);
  }

  private async prepare(key: AuthenticatedKey, translated: TranslatedTextRequest, subjectId: string): Promise<Prepared> {
    // Routed before the media fetch: a request that no upstream may serve costs no outbound call.
    const provider = this.providerFor(key, translated.model);
    const fetching = this.media.resolve(translated.gemini);
    if (fetching) await fetching;
    const estimatedInputTokens = estimateInputTokens(translated.gemini);
    const payer: PriceContext = { workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment };
    // `payer` spread last: properties after a spread are slow on Node 20 (paid-task-columns.ts).
    const held: HoldInput = {
      amountMicros: this.price(payer, translated.model, estimatedInputTokens, translated.maxOutputTokens),
      subjectType: TEXT_HOLD_SUBJECT,
      subjectId,
      ...payer,
    };
    const holdId = await this.wallet.hold(held);
    return { translated, provider, holdId, held, estimatedInputTokens, payer, track: new UpstreamTrack() };
  }

  /** The one place a provider is chosen for a request. */
  private providerFor(key: AuthenticatedKey, model: string): TextProvider {
    try {
      return this.registry.resolve<TextProvider>({ capability: 'text', model, environment: key.environment }).provider;
    } catch (error) {
      if (error instanceof NoLiveAdapterError) {
        throw new DomainError(503, TextErrorCode.Unavailable, `${model} is not available on this service: its upstream provider is not configured`);
      }
      throw error;
    }
  }

  /** The one place a text price is computed: the hold and every charge (the payer's catalogue). */
  private price(payer: PriceContext, model: TextModelId, inputTokens: number, outputTokens: number): bigint {
    return this.prices.textCost(payer, model, inputTokens, outputTokens);
  }

  private usageOf(prepared: Prepared, complete: boolean): TokenUsage {
    const reported = tokenUsage(prepared.track.usage);
    if (complete && prepared.track.usage) return reported;
    return prepared.track.partialUsage(prepared.estimatedInputTokens);
  }

  /**
   * Charges the usage, output capped at the request's own output cap (what its hold was sized
   * for; the wallet caps the charge at the hold too). `ifUnrecorded`: see WalletService.settle.
   */
  private async settle(prepared: Prepared, usage: TokenUsage, ifUnrecorded: IfUnrecorded = 'charge'): Promise<void> {
    const { model, maxOutputTokens } = prepared.translated;
    const outputTokens = Math.min(usage.outputTokens, maxOutputTokens);
    await this.wallet.settle(prepared.holdId, this.price(prepared.payer, model, usage.inputTokens, outputTokens), ifUnrecorded, prepared.held);
  }

  /**
   * The events of upstream chunks (one read, or the whole answer), made as the transport takes
   * them: each chunk is observed for billing when its `delta` (with the text it shows) is taken,
   * followed by one `tool_call` per function call it carried; none is once the signal aborted, so
   * a caller that leaves in the middle of a read is charged for the chunks it was given, not for
   * the rest of the read.
   */
  private *deltas(prepared: Prepared, chunks: GeminiResponse[], signal?: AbortSignal): Generator<TextEvent, void, undefined> {
    for (const chunk of chunks) {
      const parts = prepared.track.observe(chunk);
      let text = '';
      for (const part of parts) if (typeof part.text === 'string' && part.thought !== true) text += part.text;
      yield { type: 'delta', chunk, text };
      for (const part of parts) if (part.functionCall) yield { type: 'tool_call', call: part.functionCall };
      if (signal?.aborted) return;
    }
  }

  private async *once(key: AuthenticatedKey, translated: TranslatedTextRequest, run: TextRun): AsyncGenerator<Iterable<TextEvent>> {
    const prepared = await this.prepare(key, translated, run.subjectId);
    const { provider } = prepared;
    let answer;
    try {
      answer = await provider.generate({ model: translated.model, request: translated.gemini });
    } catch (error) {
      await this.wallet.release(prepared.holdId, prepared.held);
      throw toDomainError(error);
    }
    // The answer is whole: started, its delta and function calls, and its usage are one step.
    const events: TextEvent[] = [{ type: 'started', holdId: prepared.holdId }, ...this.deltas(prepared, [answer])];
    const usage = this.usageOf(prepared, true);
    events.push({ type: 'usage', usage });
    yield events;
    // Should the database stay unreachable, the answer is not sent (503), so nothing is owed.
    await this.settle(prepared, usage, 'release');
    yield [{ type: 'settled', usage, complete: true }];
  }

  private async *stream(key: AuthenticatedKey, translated: TranslatedTextRequest, run: TextRun): AsyncGenerator<Iterable<TextEvent>> {
    const prepared = await this.prepare(key, translated, run.subjectId);
    const { provider } = prepared;
    const signal = run.signal;
    let batches: AsyncIterable<GeminiResponse[]>;
    try {
      batches = await provider.stream({ model: translated.model, request: translated.gemini, signal });
    } catch (error) {
      // Nothing was produced: the hold is released whether the upstream refused or the caller left.
      await this.wallet.release(prepared.holdId, prepared.held);
      if (signal?.aborted) return;
      throw toDomainError(error);
    }
    yield [{ type: 'started', holdId: prepared.holdId }];

    let failure: unknown = null;
    try {
      for await (const batch of batches) {
        yield this.deltas(prepared, batch, signal);
        if (signal?.aborted) break;
      }
    } catch (error) {
      failure = error;
    }

    if (signal?.aborted) {
      // The upstream call is cancelled. Left before its first chunk: nothing was produced, and
      // nothing measured, so the hold is released (an estimate is not a measurement).
      if (prepared.track.chunks === 0) {
        await this.wallet.release(prepared.holdId, prepared.held);
        return;
      }
      // Later: the caller pays for what was produced up to now.
      const usage = this.usageOf(prepared, false);
      await this.settle(prepared, usage);
      yield [{ type: 'settled', usage, complete: false }];
      return;
    }
    if (failure !== null) {
      if (prepared.track.producedChars > 0) await this.settle(prepared, this.usageOf(prepared, false));
      else await this.wallet.release(prepared.holdId, prepared.held);
      const mapped = toDomainError(failure);
      const code = mapped instanceof DomainError ? mapped.code : TextErrorCode.UpstreamError;
      const message = mapped instanceof Error ? mapped.message : 'upstream failure';
      if (!(failure instanceof TextUpstreamError)) this.logger.error({ msg: 'text stream failed', err: failure });
      yield [{ type: 'failed', code, message }];
      return;
    }
    // Complete: settle first, then the terminal event / [DONE].
    const usage = this.usageOf(prepared, true);
    yield [{ type: 'usage', usage }];
    try {
      await this.settle(prepared, usage);
    } catch (error) {
      this.logger.error({ msg: 'text settlement failed', holdId: prepared.holdId, err: error });
      // The journal keeps the charge for what was sent; it is taken once the database is back.
      yield [{ type: 'failed', code: TextErrorCode.SettlementFailed, message: 'the charge for this answer could not be recorded yet; the stream is incomplete' }];
      return;
    }
    yield [{ type: 'settled', usage, complete: true }];
  }
}
