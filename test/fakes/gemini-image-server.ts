/**
 * A fake Gemini API for image models (`POST /v1beta/models/{model}:generateContent`) speaking
 * the real wire format (UPSTREAM §1.7, §1.9, §1.13): candidates whose parts mix text, "thought"
 * draft images and the final `inlineData` PNG, image finish reasons, a blocked prompt
 * (`promptFeedback`), Google RPC error envelopes with `RetryInfo`. Without a script it answers
 * at once with a short text and a real PNG (what the benchmark uses).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import type { GeminiPart, GeminiResponse } from '../../libs/providers/index.js';

export const FAKE_GEMINI_IMAGE_KEY = 'fake-gemini-key';

export type FakeImageScript =
  /** A candidate with these parts (default: a text part and the fake's PNG) and finish reason. */
  | { kind: 'answer'; parts?: GeminiPart[]; finishReason?: string; finishMessage?: string; usage?: Record<string, number> }
  /** The prompt is blocked: `promptFeedback.blockReason`, no candidates. */
  | { kind: 'blocked'; blockReason: string }
  | { kind: 'error'; status: number; rpcStatus: string; message: string; retryDelay?: string; retryAfter?: string }
  /** A 200 answer whose image is `bytes` long (to cross the adapter's size cap). */
  | { kind: 'oversize'; bytes: number }
  /** A 200 answer whose body is not JSON. */
  | { kind: 'garbage' };

export interface RecordedImageRequest {
  path: string;
  apiKey: string | undefined;
  body: Record<string, unknown>;
}

const USAGE = { promptTokenCount: 14, candidatesTokenCount: 1120, thoughtsTokenCount: 96, totalTokenCount: 1230 };

export class FakeGeminiImageServer {
  readonly requests: RecordedImageRequest[] = [];
  private readonly scripts: FakeImageScript[] = [];
  private server: Server | null = null;
  url = '';
  /** Set by the benchmark: no recording (keeps memory flat under load). */
  record = true;
  /** The PNG every default answer carries (64×64, one colour). */
  png: Buffer = Buffer.alloc(0);

  async start(port = 0): Promise<this> {
    this.png = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 40, g: 160, b: 90 } } }).png().toBuffer();
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** Queues the answer to the next request. */
  next(script: FakeImageScript): void {
    this.scripts.push(script);
  }

  /** The parts of a default answer: what the model says, then the picture. */
  defaultParts(): GeminiPart[] {
    return [{ text: 'Here is your picture.' }, { inlineData: { mimeType: 'image/png', data: this.png.toString('base64') } }];
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const match = /^\/v1beta\/models\/([^:/]+-image[^:/]*):generateContent$/.exec(path);
      if (req.method !== 'POST' || !match) {
        this.sendError(res, { kind: 'error', status: 404, rpcStatus: 'NOT_FOUND', message: `no route ${req.method} ${path}` });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        this.sendError(res, { kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'Invalid JSON payload received.' });
        return;
      }
      const apiKey = req.headers['x-goog-api-key'] as string | undefined;
      if (this.record) this.requests.push({ path, apiKey, body });
      if (apiKey !== FAKE_GEMINI_IMAGE_KEY) {
        this.sendError(res, { kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
        return;
      }
      this.answer(res, match[1]!, this.scripts.shift() ?? { kind: 'answer' });
    });
  }

  private answer(res: ServerResponse, model: string, script: FakeImageScript): void {
    if (script.kind === 'error') return this.sendError(res, script);
    if (script.kind === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end('<html>not json</html>');
      return;
    }
    let answer: GeminiResponse;
    if (script.kind === 'blocked') {
      answer = { promptFeedback: { blockReason: script.blockReason, safetyRatings: [] }, usageMetadata: { promptTokenCount: 14, totalTokenCount: 14 }, modelVersion: model, responseId: 'fake-image' };
    } else {
      const parts = script.kind === 'oversize' ? [{ inlineData: { mimeType: 'image/png', data: Buffer.alloc(script.bytes, 1).toString('base64') } }] : (script.parts ?? this.defaultParts());
      const finish = script.kind === 'answer' ? { finishReason: script.finishReason ?? 'STOP', ...(script.finishMessage ? { finishMessage: script.finishMessage } : {}) } : { finishReason: 'STOP' };
      answer = {
        candidates: [{ content: { role: 'model', parts }, ...finish, index: 0 }],
        usageMetadata: (script.kind === 'answer' && script.usage) || USAGE,
        modelVersion: model,
        responseId: 'fake-image',
      };
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(answer));
  }

  private sendError(res: ServerResponse, script: Extract<FakeImageScript, { kind: 'error' }>): void {
    const details = script.retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: script.retryDelay }] : [];
    res.writeHead(script.status, { 'content-type': 'application/json; charset=UTF-8', ...(script.retryAfter ? { 'retry-after': script.retryAfter } : {}) });
    res.end(JSON.stringify({ error: { code: script.status, message: script.message, status: script.rpcStatus, details } }));
  }
}
