import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { GeminiTextAdapter, type GeminiResponse, TextUpstreamError } from '../../libs/providers/index.js';
import { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, weatherTool } from './text-helpers.js';

const request = { contents: [{ role: 'user' as const, parts: [{ text: 'hi' }] }] };

describe('GeminiTextAdapter against the fake Gemini server', () => {
  let fake: FakeGeminiServer;
  let adapter: GeminiTextAdapter;

  before(async () => {
    fake = await new FakeGeminiServer().start();
    adapter = new GeminiTextAdapter({ apiKey: 'fake-gemini-key', baseUrl: fake.url });
  });
  after(async () => {
    await adapter.close();
    await fake.stop();
  });

  it('calls generateContent with the key header and the mapped model id', async () => {
    const answer = await adapter.generate({ model: 'vendor-3.7-flash', request });
    assert.equal(answer.candidates![0]!.content!.parts![0]!.text, 'Hello from the fake upstream.');
    const recorded = fake.requests.at(-1)!;
    assert.equal(recorded.path, '/v1beta/models/gemini-3.7-flash:generateContent');
    assert.equal(recorded.apiKey, 'fake-gemini-key');
    assert.deepEqual(recorded.body, request);
  });

  it('streams SSE chunks, keeping function call ids, thought signatures and code execution parts', async () => {
    const parts = [
      { executableCode: { language: 'PYTHON', code: 'print(2+2)' } },
      { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '4\n' } },
      { functionCall: { id: 'call-77', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'EtQBCtEBAdHtim8=' },
    ];
    fake.next({ kind: 'answer', parts });
    const chunks: GeminiResponse[] = [];
    for await (const batch of await adapter.stream({ model: 'vendor-3.8-flash', request })) chunks.push(...batch);
    assert.equal(fake.requests.at(-1)!.path, '/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse');
    assert.deepEqual(chunks.map((c) => c.candidates![0]!.content!.parts![0]), parts);
    assert.equal(chunks.at(-1)!.candidates![0]!.finishReason, 'STOP');
  });

  for (const [status, rpc] of [[400, 'INVALID_ARGUMENT'], [429, 'RESOURCE_EXHAUSTED'], [500, 'INTERNAL'], [503, 'UNAVAILABLE']] as const) {
    it(`turns a ${status} ${rpc} into TextUpstreamError (unary and stream)`, async () => {
      for (const mode of ['generate', 'stream'] as const) {
        fake.next({ kind: 'error', status, rpcStatus: rpc, message: `fake ${rpc}`, retryDelay: status === 429 ? '7s' : undefined });
        await assert.rejects(mode === 'generate' ? adapter.generate({ model: 'vendor-3.8-flash', request }) : adapter.stream({ model: 'vendor-3.8-flash', request }), (e: unknown) => {
          assert.ok(e instanceof TextUpstreamError);
          assert.equal(e.status, status);
          assert.equal(e.upstreamStatus, rpc);
          assert.equal(e.message, `fake ${rpc}`);
          if (status === 429) assert.equal(e.retryAfterSeconds, 7);
          return true;
        });
      }
    });
  }

  it('reports a stream cut halfway as interrupted, after yielding what arrived', async () => {
    fake.next({ kind: 'cut', parts: [{ text: 'one ' }, { text: 'two ' }, { text: 'three' }] });
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const batch of await adapter.stream({ model: 'vendor-3.8-flash', request })) for (const chunk of batch) seen.push(chunk.candidates![0]!.content!.parts![0]!.text!);
    }, (e: unknown) => e instanceof TextUpstreamError && e.upstreamStatus === 'STREAM_INTERRUPTED');
    assert.deepEqual(seen, ['one ', 'two ']);
  });

  it('cancels the upstream call when the signal aborts', async () => {
    fake.next({ kind: 'slow', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }], delayMs: 300 });
    const controller = new AbortController();
    const started = Date.now();
    await assert.rejects(async () => {
      for await (const _ of await adapter.stream({ model: 'vendor-3.8-flash', request, signal: controller.signal })) controller.abort();
    });
    assert.ok(Date.now() - started < 250, 'did not wait for the rest of the stream');
  });
});

describe('text operations through the live adapter (fake Gemini upstream)', () => {
  let fake: FakeGeminiServer;
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  before(async () => {
    fake = await new FakeGeminiServer().start();
    t = await bootTestApp({ label: 'text-live', env: { GEMINI_API_KEY: 'fake-gemini-key', GEMINI_BASE_URL: fake.url } });
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
  });
  after(async () => {
    await t.close();
    await fake.stop();
  });

  it('passes upstream function call ids and signatures to the client and back, byte for byte', async () => {
    fake.next({
      kind: 'answer',
      parts: [{ functionCall: { id: 'native-1', name: 'get_weather', args: { city: 'Paris', unit: 'celsius', days: 1 } }, thoughtSignature: 'EtQBCtEBAdHtim8=' }],
    });
    const first = await client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'weather' }], tools: [weatherTool] });
    const message = first.choices[0]!.message as any;
    assert.equal(message.tool_calls[0].id, 'native-1');
    assert.deepEqual(message.tool_calls[0].extra_content, { vendor: { thought_signature: 'EtQBCtEBAdHtim8=', function_call_id: 'native-1' } });
    await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: 'weather' }, message, { role: 'tool', tool_call_id: 'native-1', content: 'sunny' }],
      tools: [weatherTool],
    });
    const sent = fake.requests.at(-1)!.body as any;
    assert.deepEqual(sent.contents[1], { role: 'model', parts: [{ functionCall: { id: 'native-1', name: 'get_weather', args: { city: 'Paris', unit: 'celsius', days: 1 } }, thoughtSignature: 'EtQBCtEBAdHtim8=' }] });
    assert.deepEqual(sent.contents[2], { role: 'user', parts: [{ functionResponse: { id: 'native-1', name: 'get_weather', response: { output: 'sunny' } } }] });
  });

  it('maps upstream 429 to 429 with Retry-After and releases the hold', async () => {
    fake.next({ kind: 'error', status: 429, rpcStatus: 'RESOURCE_EXHAUSTED', message: 'quota', retryDelay: '3s' });
    await assert.rejects(client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }] }), (e: any) => {
      assert.equal(e.status, 429);
      assert.equal(e.error.code, 'text.upstream_rate_limited');
      assert.equal(e.headers.get('retry-after'), '3');
      return true;
    });
    assert.equal((await textHolds(t, account.workspaceId)).at(-1)!.status, 'released');
  });

  it('a stream cut halfway ends with an error event and no [DONE], charging what was produced', async () => {
    fake.next({ kind: 'cut', parts: [{ text: 'one ' }, { text: 'two ' }, { text: 'three' }] });
    const response = await t.request('/api/svc/v1/chat/completions', { method: 'POST', key: account.key, json: { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'x' }], stream: true } });
    assert.equal(response.status, 200);
    const body = await response.text();
    assert.match(body, /event: error\ndata: \{"error":\{"code":"text.stream_interrupted"/);
    assert.doesNotMatch(body, /\[DONE\]/);
    const hold = (await textHolds(t, account.workspaceId)).at(-1)!;
    assert.equal(hold.status, 'settled');
    assert.ok(BigInt(hold.captured_micros) > 0n);
  });

  it('a Responses stream cut halfway ends with an error event and no terminal event', async () => {
    fake.next({ kind: 'cut', parts: [{ text: 'one ' }, { text: 'two ' }, { text: 'three' }] });
    const response = await t.request('/api/svc/v1/responses', { method: 'POST', key: account.key, json: { model: 'vendor-3.8-flash', input: 'x', stream: true } });
    const body = await response.text();
    assert.match(body, /event: error\n/);
    assert.doesNotMatch(body, /response\.completed|response\.incomplete|\[DONE\]/);
  });
});

describe('GeminiTextAdapter stream parsing (raw SSE bytes)', () => {
  let server: Server;
  let url = '';
  /** What the next stream request answers: the pieces of its body, written one by one, a pause between them. */
  let pieces: Buffer[] = [];

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of pieces) {
          res.write(piece);
          // A pause, so the pieces usually reach the adapter in separate reads.
          await new Promise((resolve) => setTimeout(resolve, 15));
        }
        res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const event = (text: string, last = false) => `data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(last ? { finishReason: 'STOP' } : {}) }] })}`;

  /** The texts of the stream's chunks, grouped as the adapter yielded them. */
  async function batches(body: Buffer[]): Promise<string[][]> {
    pieces = body;
    const adapter = new GeminiTextAdapter({ apiKey: 'k', baseUrl: url });
    try {
      const out: string[][] = [];
      for await (const batch of await adapter.stream({ model: 'vendor-3.7-flash', request })) out.push(batch.map((chunk) => chunk.candidates![0]!.content!.parts![0]!.text!));
      return out;
    } finally {
      await adapter.close();
    }
  }

  const texts = async (body: Buffer[]): Promise<string[]> => (await batches(body)).flat();

  it('decodes a character split across two reads once, whole', async () => {
    const bytes = Buffer.from(`${event('héllo 日本語 👋')}\r\n\r\n${event('fin', true)}\r\n\r\n`, 'utf8');
    // Cut inside the 4-byte emoji and inside a 3-byte kanji.
    const emoji = bytes.indexOf(Buffer.from('👋', 'utf8')) + 2;
    const kanji = bytes.indexOf(Buffer.from('本', 'utf8')) + 1;
    assert.deepEqual(await texts([bytes.subarray(0, kanji), bytes.subarray(kanji, emoji), bytes.subarray(emoji)]), ['héllo 日本語 👋', 'fin']);
  });

  it('takes the three line-ending styles, several events per read, an event cut across reads and multi-line data', async () => {
    const multiLine = `data: {"candidates":[{"content":{"role":"model",\ndata: "parts":[{"text":"two lines"}]}}]}`;
    const body = `: a comment\n\n${event('a')}\n\n${event('b')}\r\r${multiLine}\r\n\r\n${event('c', true)}\n\n`;
    const bytes = Buffer.from(body, 'utf8');
    const cut = body.indexOf('"b"') + 1;
    assert.deepEqual(await texts([bytes.subarray(0, cut), bytes.subarray(cut)]), ['a', 'b', 'two lines', 'c']);
  });

  it('yields the events of one read together, in order, and never an empty batch', async () => {
    const first = Buffer.from(`${event('a')}\n\n${event('b')}\n\n${event('c')}\n\n: a comment\n\n`, 'utf8');
    const second = Buffer.from(`: only a comment\n\n`, 'utf8');
    const third = Buffer.from(`${event('d')}\n\n${event('e', true)}\n\n`, 'utf8');
    assert.deepEqual(await batches([first, second, third]), [
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
  });

  it('an event that is not JSON fails the stream after the events before it in the same read', async () => {
    const seen: string[] = [];
    pieces = [Buffer.from(`${event('a')}\n\n${event('b')}\n\ndata: {not json\n\n${event('c', true)}\n\n`, 'utf8')];
    const adapter = new GeminiTextAdapter({ apiKey: 'k', baseUrl: url });
    try {
      await assert.rejects(async () => {
        for await (const batch of await adapter.stream({ model: 'vendor-3.7-flash', request })) for (const chunk of batch) seen.push(chunk.candidates![0]!.content!.parts![0]!.text!);
      }, (e: unknown) => e instanceof TextUpstreamError && e.status === 502);
    } finally {
      await adapter.close();
    }
    assert.deepEqual(seen, ['a', 'b']);
  });

  it('a last event without its blank line is still read', async () => {
    assert.deepEqual(await texts([Buffer.from(`${event('a')}\n\n${event('z', true)}`, 'utf8')]), ['a', 'z']);
  });
});
