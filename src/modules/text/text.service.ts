import { Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../../libs/common/index.js';
import {
  ChatAssembler,
  estimateInputTokens,
  NoLiveAdapterError,
  ProviderRegistry,
  ResponsesAssembler,
  TextErrorCode,
  type TextOperation,
  type TextProvider,
  TextUpstreamError,
  type TokenUsage,
  tokenUsage,
  translateTextRequest,
  type TranslatedTextRequest,
} from '../../../libs/providers/index.js';
import { PriceCatalogue, type PriceContext } from '../billing/price-catalogue.js';
import { type IfUnrecorded, WalletService } from '../billing/wallet.service.js';
import type { AuthenticatedKey } from '../identity/authenticated-key.js';
import { dataLine, eventLine, SseWriter } from './sse-writer.js';
import { TextMediaResolver } from './text-media.resolver.js';

/** An upstream refusal or failure as the client sees it. */
export function toDomainError(error: unknown): unknown {
  if (!(error instanceof TextUpstreamError)) return error;
  const message = `upstream: ${error.message}`;
  const headers: Record<string, string> = error.retryAfterSeconds ? { 'retry-after': String(error.retryAfterSeconds) } : {};
  switch (true) {
    case error.upstreamStatus === 'STREAM_INTERRUPTED':
      return new DomainError(502, TextErrorCode.StreamInterrupted, message);
    case error.status === 400:
      return new DomainError(400, TextErrorCode.UpstreamRejected, message);
    case error.status === 429:
      return new DomainError(429, TextErrorCode.UpstreamRateLimited, message, headers);
    case error.status === 503:
      return new DomainError(503, TextErrorCode.UpstreamUnavailable, message, headers);
    case error.status === 504:
      return new DomainError(504, TextErrorCode.UpstreamTimeout, message);
    default:
      return new DomainError(502, TextErrorCode.UpstreamError, message);
  }
}

interface Prepared {
  translated: TranslatedTextRequest;
  provider: TextProvider;
  holdId: string;
  estimatedInputTokens: number;
  /** Who pays: the hold and the charge are priced for the same workspace and key. */
  payer: PriceContext;
}

/**
 * The text operations' flow: validate and translate (every refusal before any hold) → fetch
 * HTTPS media → hold the input estimate plus the output cap → call the upstream → settle on
 * the upstream's reported usage before the response, the terminal event or `[DONE]`.
 */
@Injectable()
export class TextService {
  private readonly logger = new Logger(TextService.name);

  constructor(
    private readonly registry: ProviderRegistry,
    private readonly wallet: WalletService,
    private readonly media: TextMediaResolver,
    private readonly prices: PriceCatalogue,
  ) {}

  async generate(operation: TextOperation, key: AuthenticatedKey, body: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const translated = translateTextRequest(operation, body);
    const chat = operation === 'chat' ? new ChatAssembler(translated.model, translated.includeUsage) : null;
    const responses = operation === 'responses' ? new ResponsesAssembler(translated.model, translated.echo) : null;
    const prepared = await this.prepare(key, translated, chat?.id ?? responses!.id);
    if (translated.stream) await this.stream(prepared, chat, responses, request, reply);
    else await this.once(prepared, chat, responses, reply);
  }

  private async prepare(key: AuthenticatedKey, translated: TranslatedTextRequest, subjectId: string): Promise<Prepared> {
    // Routed before the media fetch: a request that no upstream may serve costs no outbound call.
    const provider = this.providerFor(key, translated.model);
    await this.media.resolve(translated.gemini);
    const estimatedInputTokens = estimateInputTokens(translated.gemini);
    const payer: PriceContext = { workspaceId: key.workspaceId, apiKeyId: key.id, environment: key.environment };
    const holdId = await this.wallet.hold({
      ...payer,
      amountMicros: this.prices.textCost(payer, translated.model, estimatedInputTokens, translated.maxOutputTokens),
      subjectType: 'text',
      subjectId,
    });
    return { translated, provider, holdId, estimatedInputTokens, payer };
  }

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

  private usageOf(assembler: ChatAssembler | ResponsesAssembler, estimatedInputTokens: number, complete: boolean): TokenUsage {
    const reported = tokenUsage(assembler.track.usage);
    if (complete && assembler.track.usage) return reported;
    return assembler.track.partialUsage(estimatedInputTokens);
  }

  /**
   * Charges the usage, output capped at the request's own output cap (what its hold was sized
   * for; the wallet caps the charge at the hold too). `ifUnrecorded`: see WalletService.settle.
   */
  private async settle(prepared: Prepared, usage: TokenUsage, ifUnrecorded: IfUnrecorded = 'charge'): Promise<void> {
    const { model, maxOutputTokens } = prepared.translated;
    const outputTokens = Math.min(usage.outputTokens, maxOutputTokens);
    await this.wallet.settle(prepared.holdId, this.prices.textCost(prepared.payer, model, usage.inputTokens, outputTokens), ifUnrecorded);
  }

  private async once(prepared: Prepared, chat: ChatAssembler | null, responses: ResponsesAssembler | null, reply: FastifyReply): Promise<void> {
    const { translated, provider } = prepared;
    let answer;
    try {
      answer = await provider.generate({ model: translated.model, request: translated.gemini });
    } catch (error) {
      await this.wallet.release(prepared.holdId);
      throw toDomainError(error);
    }
    const assembler = (chat ?? responses)!;
    if (chat) chat.push(answer);
    else {
      responses!.push(answer);
      responses!.finishItems();
    }
    const usage = this.usageOf(assembler, prepared.estimatedInputTokens, true);
    // Should the database stay unreachable, the answer is not sent (503), so nothing is owed.
    await this.settle(prepared, usage, 'release');
    const body = chat ? chat.completion(usage) : responses!.response(responses!.status, usage);
    await reply.status(200).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private async stream(
    prepared: Prepared,
    chat: ChatAssembler | null,
    responses: ResponsesAssembler | null,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const { translated, provider } = prepared;
    const assembler = (chat ?? responses)!;
    const upstream = new AbortController();
    let clientGone = false;
    const raw = reply.raw;
    const onClose = () => {
      if (!raw.writableFinished) {
        clientGone = true;
        upstream.abort();
      }
    };
    raw.on('close', onClose);

    let chunks: AsyncIterable<Parameters<ChatAssembler['push']>[0]>;
    try {
      chunks = await provider.stream({ model: translated.model, request: translated.gemini, signal: upstream.signal });
    } catch (error) {
      raw.off('close', onClose);
      // Nothing was produced: the hold is released whether the upstream refused or the client left.
      await this.wallet.release(prepared.holdId);
      if (clientGone) return;
      throw toDomainError(error);
    }

    reply.hijack();
    const writer = new SseWriter(raw);
    writer.start({ 'x-request-id': String(request.id) });
    if (responses) await writer.write(responses.start().map((e) => eventLine(e.type, e)).join(''));

    let failure: unknown = null;
    try {
      for await (const chunk of chunks) {
        if (chat) {
          const out = chat.push(chunk);
          if (out) await writer.write(dataLine(out));
        } else {
          const events = responses!.push(chunk);
          if (events.length > 0) await writer.write(events.map((e) => eventLine(e.type, e)).join(''));
        }
        if (clientGone) break;
      }
    } catch (error) {
      failure = error;
    }

    try {
      if (clientGone) {
        // The upstream call is cancelled; the client pays for what was produced up to now.
        await this.settle(prepared, this.usageOf(assembler, prepared.estimatedInputTokens, false));
        return;
      }
      if (failure !== null) {
        const produced = assembler.track.producedChars > 0;
        if (produced) await this.settle(prepared, this.usageOf(assembler, prepared.estimatedInputTokens, false));
        else await this.wallet.release(prepared.holdId);
        const mapped = toDomainError(failure);
        const code = mapped instanceof DomainError ? mapped.code : TextErrorCode.UpstreamError;
        const message = mapped instanceof Error ? mapped.message : 'upstream failure';
        if (!(failure instanceof TextUpstreamError)) this.logger.error({ msg: 'text stream failed', err: failure });
        await writer.write(chat ? eventLine('error', { error: { code, message } }) : eventLine('error', responses!.error(code, message)));
        return;
      }
      // Complete: settle first, then the terminal event / [DONE].
      if (responses) await writer.write(responses.finishItems().map((e) => eventLine(e.type, e)).join(''));
      const usage = this.usageOf(assembler, prepared.estimatedInputTokens, true);
      try {
        await this.settle(prepared, usage);
      } catch (error) {
        this.logger.error({ msg: 'text settlement failed', holdId: prepared.holdId, err: error });
        // The journal keeps the charge for what was sent; it is taken once the database is back.
        const message = 'the charge for this answer could not be recorded yet; the stream is incomplete';
        await writer.write(
          chat ? eventLine('error', { error: { code: TextErrorCode.SettlementFailed, message } }) : eventLine('error', responses!.error(TextErrorCode.SettlementFailed, message)),
        );
        return;
      }
      if (chat) {
        // The spec's final usage chunk (empty `choices`) is always sent: a client that did not ask
        // with stream_options.include_usage still learns what it was charged for. OpenAI clients
        // accept a chunk with empty choices.
        await writer.write(`${dataLine(chat.finishChunk())}${dataLine(chat.usageChunk(usage))}data: [DONE]\n\n`);
      } else {
        const terminal = responses!.terminal(usage);
        await writer.write(eventLine(terminal.type, terminal));
      }
    } finally {
      raw.off('close', onClose);
      writer.end();
    }
  }
}
