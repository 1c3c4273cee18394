import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of Google's long-running video generation (upstreams.md §1.14) for adapter tests:
 * `POST /v1beta/models/{model}:predictLongRunning` → `{name}`, `GET /v1beta/{name}` → the
 * operation, and `GET /v1beta/files/{id}:download?alt=media` (302 to `/blobs/{id}` on first use,
 * like Google's redirect to storage) → MP4 bytes. Errors use the Google RPC envelope (§1.9).
 *
 * Behaviour is chosen by a marker in the prompt:
 *   `fake:rate-limit` 429 RESOURCE_EXHAUSTED with RetryInfo (always; `fake:rate-limit-once` once per prompt)
 *   `fake:server-error` 500 INTERNAL (always; `fake:server-error-once` once per prompt)
 *   `fake:safety` the operation ends done with raiMediaFilteredCount 1 and no samples
 *   `fake:op-error` the operation ends done with `error: {code: 3}`
 *   `fake:slow` the operation needs 3 polls before it is done
 *   `fake:lose-answer` the operation is created, then the connection is destroyed unanswered
 *   `fake:bad-request` 400 INVALID_ARGUMENT
 */
export class FakeGeminiVideoServer {
  readonly apiKey = 'fake-gemini-key';
  private server!: Server;
  baseUrl = '';
  readonly submits: Array<{ model: string; body: any }> = [];
  readonly operations = new Map<string, { model: string; prompt: string; polls: number; created: number }>();
  private readonly seenOnce = new Set<string>();
  constructor(private readonly video: Buffer) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    if (url.pathname.startsWith('/blobs/')) {
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': this.video.length }).end(this.video);
      return;
    }
    if (request.headers['x-goog-api-key'] !== this.apiKey) {
      return googleError(response, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    }
    const submit = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(url.pathname);
    if (submit && request.method === 'POST') {
      const body = JSON.parse(await readBody(request)) as { instances?: Array<{ prompt?: string }> };
      const prompt = body.instances?.[0]?.prompt ?? '';
      this.submits.push({ model: submit[1]!, body });
      if (prompt.includes('fake:bad-request')) return googleError(response, 400, 'INVALID_ARGUMENT', 'bad field');
      if (prompt.includes('fake:rate-limit') && (!prompt.includes('fake:rate-limit-once') || this.once(`429:${prompt}`))) {
        return googleError(response, 429, 'RESOURCE_EXHAUSTED', 'quota', [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'PredictLongRunningRequestsPerMinutePerProject' }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' },
        ]);
      }
      if (prompt.includes('fake:server-error') && (!prompt.includes('fake:server-error-once') || this.once(`500:${prompt}`))) {
        return googleError(response, 500, 'INTERNAL', 'An internal error has occurred.');
      }
      const name = `models/${submit[1]}/operations/${randomUUID().replace(/-/g, '')}`;
      this.operations.set(name, { model: submit[1]!, prompt, polls: 0, created: Date.now() });
      if (prompt.includes('fake:lose-answer')) {
        request.socket.destroy();
        return;
      }
      json(response, 200, { name });
      return;
    }
    const download = /^\/v1beta\/files\/([A-Za-z0-9]+):download$/.exec(url.pathname);
    if (download && request.method === 'GET') {
      response.writeHead(302, { location: `${this.baseUrl}/blobs/${download[1]}` }).end();
      return;
    }
    const poll = /^\/v1beta\/(models\/[^/]+\/operations\/[A-Za-z0-9]+)$/.exec(url.pathname);
    if (poll && request.method === 'GET') {
      const op = this.operations.get(poll[1]!);
      if (!op) return googleError(response, 404, 'NOT_FOUND', 'operation not found');
      op.polls++;
      const done = !op.prompt.includes('fake:slow') || op.polls > 3;
      if (!done) return json(response, 200, { name: poll[1], done: false, metadata: {} });
      if (op.prompt.includes('fake:op-error')) return json(response, 200, { name: poll[1], done: true, error: { code: 3, message: 'internal detail' } });
      const generateVideoResponse = op.prompt.includes('fake:safety')
        ? { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['upstream-secret-reason'] }
        : { generatedSamples: [{ video: { uri: `${this.baseUrl}/v1beta/files/${poll[1]!.split('/').pop()}:download?alt=media` } }] };
      return json(response, 200, {
        name: poll[1],
        done: true,
        response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse },
      });
    }
    googleError(response, 404, 'NOT_FOUND', 'no such method');
  }

  private once(key: string): boolean {
    if (this.seenOnce.has(key)) return false;
    this.seenOnce.add(key);
    return true;
  }
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(text);
}

function googleError(response: ServerResponse, code: number, status: string, message: string, details: unknown[] = []): void {
  json(response, code, { error: { code, message, status, details } });
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
