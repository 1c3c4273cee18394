import { Injectable } from '@nestjs/common';
import { GuardedHttpClient, OutboundRequestError } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { signWebhook } from './webhook-signature.js';

/** Names the service to receivers (and in their logs). */
export const WEBHOOK_USER_AGENT = 'svc-webhooks/1.0 (+generation-service)';
/** Of a receiver's answer only the start is read (a hint for the delivery log); the rest is dropped. */
const RESPONSE_READ_BYTES = 2048;
const ERROR_TEXT_CHARS = 500;

/** What one POST came to: an HTTP status, or a failure before one arrived. */
export type SendOutcome =
  | { kind: 'answered'; statusCode: number; retryAfter?: string; bodyStart: string }
  | { kind: 'unreached'; retryable: boolean; error: string };

/**
 * Signs and POSTs one attempt through the guarded outbound client (DESIGN §7: SSRF checks, a
 * pinned address, no redirect followed, the whole exchange bounded by WEBHOOK_DELIVERY_TIMEOUT_MS).
 * `t` is this attempt's time; the body is the event's frozen payload, byte for byte.
 */
@Injectable()
export class WebhookSender {
  constructor(
    private readonly http: GuardedHttpClient,
    private readonly config: AppConfig,
  ) {}

  async send(url: string, secret: string, eventId: string, payload: string, at: Date): Promise<SendOutcome> {
    try {
      const response = await this.http.requestStream(url, {
        method: 'POST',
        body: payload,
        timeoutMs: this.config.env.WEBHOOK_DELIVERY_TIMEOUT_MS,
        // Only RESPONSE_READ_BYTES are ever read: an announced Content-Length, however large, is no
        // reason to fail an answer (the client's default cap would turn a 2xx into a failure).
        maxBytes: Number.MAX_SAFE_INTEGER,
        headers: {
          'content-type': 'application/json',
          'user-agent': WEBHOOK_USER_AGENT,
          'x-svc-event-id': eventId,
          'x-svc-signature': signWebhook(secret, payload, at),
        },
      });
      const bodyStart = await readStart(response.body);
      return { kind: 'answered', statusCode: response.status, retryAfter: response.headers['retry-after'], bodyStart };
    } catch (err) {
      if (!(err instanceof OutboundRequestError)) throw err;
      // A refused URL (scheme, address, port) will be refused again: no point retrying it.
      const retryable = err.reason === 'timeout' || err.reason === 'network' || err.reason === 'dns_failed';
      return { kind: 'unreached', retryable, error: `${err.reason}: ${err.message}`.slice(0, ERROR_TEXT_CHARS) };
    }
  }
}

/** The first bytes of a body as text; the stream is then destroyed (its connection released). */
async function readStart(body: NodeJS.ReadableStream & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= RESPONSE_READ_BYTES) break;
    }
  } catch {
    // The status is what counts; a body cut short changes nothing.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_READ_BYTES).toString('utf8').slice(0, ERROR_TEXT_CHARS);
}
