/**
 * A fake Gemini API for text (`generateContent`, `streamGenerateContent?alt=sse`) speaking the
 * real wire format (UPSTREAM §1): candidates with parts, usageMetadata, function calls with ids
 * and thought signatures, code-execution parts, Google RPC error envelopes, SSE with `\r\n\r\n`
 * separators, and a stream cut halfway. Tests queue scripted answers; without a script it
 * answers at once with a short text (what the benchmark uses).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GeminiPart, GeminiResponse } from '../../libs/providers/index.js';

export type FakeGeminiScript =
  | { kind: 'answer'; parts: GeminiPart[]; finishReason?: string; usage?: Record<string, number> }
  | { kind: 'error'; status: number; rpcStatus: string; message: string; retryDelay?: string }
  /** SSE only: the given chunks, then the connection is cut (no final chunk). */
  | { kind: 'cut'; parts: GeminiPart[] }
  /** SSE only: chunks sent with a pause between them. */
  | { kind: 'slow'; parts: GeminiPart[]; delayMs: number };

export interface RecordedRequest {
  path: string;
  apiKey: string | undefined;
  body: Record<string, unknown>;
}

const DEFAULT_USAGE = { promptTokenCount: 12, candidatesTokenCount: 8, thoughtsTokenCount: 20, totalTokenCount: 40 };

export class FakeGeminiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly scripts: FakeGeminiScript[] = [];
  private server: Server | null = null;
  url = '';
  /** Set by the benchmark: no recording (keeps memory flat under load). */
  record = true;

  async start(port = 0): Promise<this> {
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
  next(script: FakeGeminiScript): void {
    this.scripts.push(script);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const match = /^\/v1beta\/models\/([^:]+):(generateContent|streamGenerateContent)(\?alt=sse)?$/.exec(path);
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
      if (apiKey !== 'fake-gemini-key') {
        this.sendError(res, { kind: 'error', status: 400, rpcStatus: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
        return;
      }
      const model = match[1]!;
      const script = this.scripts.shift() ?? { kind: 'answer', parts: [{ text: 'Hello from the fake upstream.' }] };
      if (script.kind === 'error') {
        this.sendError(res, script);
        return;
      }
      if (match[2] === 'generateContent') {
        if (script.kind !== 'answer') throw new Error('cut/slow scripts are for streams');
        const answer: GeminiResponse = {
          candidates: [{ content: { role: 'model', parts: script.parts }, finishReason: script.finishReason ?? 'STOP', index: 0 }],
          usageMetadata: script.usage ?? DEFAULT_USAGE,
          modelVersion: model,
          responseId: 'fake-response',
        };
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify(answer));
        return;
      }
      void this.streamAnswer(res, model, script);
    });
  }

  private async streamAnswer(res: ServerResponse, model: string, script: Exclude<FakeGeminiScript, { kind: 'error' }>): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const usage = script.kind === 'answer' && script.usage ? script.usage : DEFAULT_USAGE;
    const parts = script.parts;
    for (let i = 0; i < parts.length; i++) {
      if (script.kind === 'slow' && i > 0) await new Promise((r) => setTimeout(r, script.delayMs));
      if (res.destroyed) return;
      const last = i === parts.length - 1;
      const chunk: GeminiResponse = {
        candidates: [{ content: { role: 'model', parts: [parts[i]!] }, index: 0, ...(last && script.kind !== 'cut' ? { finishReason: script.kind === 'answer' ? (script.finishReason ?? 'STOP') : 'STOP' } : {}) }],
        usageMetadata: last ? usage : { promptTokenCount: usage.promptTokenCount!, candidatesTokenCount: i + 1, totalTokenCount: usage.promptTokenCount! + i + 1 },
        modelVersion: model,
        responseId: 'fake-response',
      };
      if (script.kind === 'cut' && last) {
        // Half an event, then the connection dies (after the earlier chunks reached the wire).
        await new Promise((r) => setTimeout(r, 20));
        res.write(`data: ${JSON.stringify(chunk).slice(0, 20)}`);
        await new Promise((r) => setTimeout(r, 10));
        res.socket?.destroy();
        return;
      }
      res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    }
    res.end();
  }

  private sendError(res: ServerResponse, script: Extract<FakeGeminiScript, { kind: 'error' }>): void {
    const details = script.retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: script.retryDelay }] : [];
    res.writeHead(script.status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify({ error: { code: script.status, message: script.message, status: script.rpcStatus, details } }));
  }
}
