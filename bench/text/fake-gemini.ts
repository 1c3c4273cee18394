// An instant fake Gemini upstream for the text benchmark, run as its own process so its CPU is
// not counted in the gateway's. Speaks the wire format the live adapter reads (UPSTREAM §1):
//   POST /v1beta/models/<m>:generateContent            → one GenerateContentResponse
//   POST /v1beta/models/<m>:streamGenerateContent?alt=sse → CHUNKS `data:` events (`\r\n\r\n`),
//        the last with finishReason and usage — the same 20 chunks the Portkey anchor's fake sends.
// Nothing is recorded, nothing waits. Env: PORT (0 = any), CHUNKS (20). Prints `listening <url>`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const CHUNKS = Number(process.env.CHUNKS ?? 20);
const ROUTE = /^\/v1beta\/models\/([^:/]+):(generateContent|streamGenerateContent)(\?alt=sse)?$/;

const usage = { promptTokenCount: 12, candidatesTokenCount: 11, totalTokenCount: 23 };

function unary(model: string): string {
  return JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text: 'Hello! This is a fixed reply from the fake upstream.' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: model,
    responseId: 'fake-response',
  });
}

function chunk(model: string, i: number, n: number): string {
  const last = i === n - 1;
  return `data: ${JSON.stringify({
    candidates: [{ content: { role: 'model', parts: [{ text: `tok${i} ` }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    usageMetadata: last
      ? { promptTokenCount: 12, candidatesTokenCount: n, totalTokenCount: 12 + n }
      : { promptTokenCount: 12, candidatesTokenCount: i + 1, totalTokenCount: 13 + i },
    modelVersion: model,
    responseId: 'fake-response',
  })}\r\n\r\n`;
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
    return;
  }
  const match = ROUTE.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}');
    return;
  }
  req.resume(); // the body is read and dropped (the gateway's JSON work is what is measured)
  req.on('end', () => {
    const model = match[1]!;
    if (match[2] === 'generateContent') {
      const out = unary(model);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(out) });
      res.end(out);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < CHUNKS - 1; i++) res.write(chunk(model, i, CHUNKS));
    res.end(chunk(model, CHUNKS - 1, CHUNKS));
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
