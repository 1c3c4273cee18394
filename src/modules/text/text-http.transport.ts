import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedKey } from '../identity/index.js';
import { dataLine, eventLine, SseWriter } from './sse-writer.js';
import { TextGenerationUseCase } from './text-generation.use-case.js';
import { type TextFrame, type TextOutput, textOutputFor } from './text-output.js';
import { translateTextRequest } from './translation/translate-request.js';
import type { TextOperation, TranslatedTextRequest } from './translation/translated-request.js';

/** SSE framing of one text frame. */
const frameText = (frame: TextFrame): string => {
  if (frame.kind === 'done') return 'data: [DONE]\n\n';
  if (frame.kind === 'event') return eventLine(frame.type, frame.payload);
  return frame.json === undefined ? dataLine(frame.payload) : `data: ${frame.json}\n\n`;
};

/** SSE framing of text frames, written together in one write (most calls carry none or one). */
const sse = (frames: TextFrame[]): string => (frames.length === 0 ? '' : frames.length === 1 ? frameText(frames[0]!) : frames.map(frameText).join(''));

/**
 * The text operations over HTTP: validate and translate the body (every refusal before any
 * hold), then carry the use case's events to the client as one JSON answer or as SSE. Money and
 * upstream rules live in TextGenerationUseCase; this class only writes.
 */
@Injectable()
export class TextHttpTransport {
  constructor(private readonly generation: TextGenerationUseCase) {}

  async handle(operation: TextOperation, key: AuthenticatedKey, body: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const translated = translateTextRequest(operation, body);
    const output = textOutputFor(translated);
    if (translated.stream) await this.stream(key, translated, output, request, reply);
    else await this.json(key, translated, output, reply);
  }

  /**
   * Not streamed: a client that disconnects while waiting does not cancel the call (no signal):
   * it runs to its end and is settled on its usage, as the upstream bills it.
   */
  private async json(key: AuthenticatedKey, translated: TranslatedTextRequest, output: TextOutput, reply: FastifyReply): Promise<void> {
    for await (const events of this.generation.run(key, translated, { subjectId: output.id })) {
      for (const event of events) {
        if (event.type === 'delta') output.delta(event.chunk);
        else if (event.type === 'usage') output.complete();
        else if (event.type === 'settled') {
          await reply.status(200).header('content-type', 'application/json; charset=utf-8').send(output.body(event.usage));
        }
      }
    }
  }

  /**
   * SSE: headers go out once the upstream accepted the call (a refusal before that is a plain
   * error status); the socket closing before the end aborts the run. The writer waits for
   * 'drain', and the use case reads the next upstream chunk only when this loop asks for it.
   */
  private async stream(key: AuthenticatedKey, translated: TranslatedTextRequest, output: TextOutput, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const upstream = new AbortController();
    const raw = reply.raw;
    const onClose = () => {
      if (!raw.writableFinished) upstream.abort();
    };
    raw.on('close', onClose);
    let writer: SseWriter | null = null;
    try {
      for await (const events of this.generation.run(key, translated, { subjectId: output.id, signal: upstream.signal })) {
        for (const event of events) {
          let text = '';
          switch (event.type) {
            case 'started':
              reply.hijack();
              writer = new SseWriter(raw);
              writer.start({ 'x-request-id': String(request.id) });
              text = sse(output.start());
              break;
            case 'delta':
              text = sse(output.delta(event.chunk));
              break;
            case 'usage':
              text = sse(output.complete());
              break;
            case 'settled':
              // The last events and the end of the body leave in one write.
              if (event.complete) writer!.end(sse(output.terminal(event.usage)));
              break;
            case 'failed':
              text = sse([output.error(event.code, event.message)]);
              break;
          }
          if (text !== '' && !writer!.write(text)) await writer!.drained();
        }
      }
    } finally {
      raw.off('close', onClose);
      writer?.end();
    }
  }
}
