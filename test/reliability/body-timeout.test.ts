/**
 * Attack: a client sends a request's headers, announcing a body, and then nothing (or half the
 * body, or never finishes its headers). Fastify's requestTimeout defaulted to 0, so such a
 * connection held its socket (and, for the text routes, up to 32 MiB of buffer) for 330 s and
 * more; a few thousand of them exhaust the server.
 * How: raw TCP sockets against an app booted with REQUEST_TIMEOUT_MS=1000: the server must
 * answer 408 `request.timeout` in the envelope and close the socket, and nothing may be
 * reserved. The timeout limits receiving the request only: an SSE answer streamed slowly
 * through the live adapter (fake Gemini) for longer than the timeout must arrive whole.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import type { TestAccount } from '../support/factories.js';
import { rawHttp } from '../support/raw-http.js';
import type { TestApp } from '../support/test-app.js';
import { fakeGeminiSuite, openaiFor, textHolds } from '../text/text-helpers.js';

const TIMEOUT_MS = 1000;

describe('request timeout: a stalled request is answered 408 and closed; responses are not limited', () => {
  let fake: FakeGeminiServer;
  let t: TestApp;
  let account: TestAccount;

  fakeGeminiSuite({ label: 'body-timeout', creditUsd: 5, env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } }, (booted) => ({ t, account, fake } = booted));

  const body = JSON.stringify({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'Hello there' }] });
  const head = (): string =>
    `POST /api/svc/v1/chat/completions HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;

  const stalls: Array<{ name: string; request: () => string }> = [
    { name: 'headers with a content-length, then nothing', request: head },
    { name: 'half of the body, then nothing', request: () => head() + body.slice(0, body.length / 2) },
    { name: 'headers that never end', request: () => `POST /api/svc/v1/chat/completions HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n` },
  ];

  for (const { name, request } of stalls) {
    it(`answers 408 request.timeout and closes the socket: ${name}`, async () => {
      const answer = await rawHttp(t.baseUrl, request(), 10 * TIMEOUT_MS);
      console.log(`${name}: ${answer.status || 'no answer'}, socket ${answer.closedByServer ? 'closed by the server' : 'still open when the test gave up'} after ${answer.elapsedMs} ms (REQUEST_TIMEOUT_MS ${TIMEOUT_MS})`);
      assert.equal(answer.closedByServer, true, 'the server must close a stalled connection');
      assert.equal(answer.status, 408);
      assert.deepEqual(JSON.parse(answer.body), { error: { code: 'request.timeout', message: 'the request was not received in time' } });
      assert.ok(answer.elapsedMs >= TIMEOUT_MS - 50, `answered before the timeout (${answer.elapsedMs} ms)`);
    });
  }

  it('reserves nothing for a request that timed out', async () => {
    assert.deepEqual(await textHolds(t, account.workspaceId), []);
    assert.equal(fake.requests.length, 0, 'nothing went upstream');
  });

  it('lets a streamed answer run longer than the timeout (SSE through the live adapter)', async () => {
    const words = ['one ', 'two ', 'three ', 'four ', 'five'];
    fake.next({ kind: 'slow', parts: words.map((text) => ({ text })), delayMs: 600 });
    const started = Date.now();
    const stream = await openaiFor(t, account.key).chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: 'Count to five slowly' }],
      stream: true,
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const elapsedMs = Date.now() - started;
    console.log(`slow SSE answer: ${elapsedMs} ms with REQUEST_TIMEOUT_MS ${TIMEOUT_MS}`);
    assert.ok(elapsedMs > 2 * TIMEOUT_MS, `the stream must outlast the timeout to prove anything (${elapsedMs} ms)`);
    assert.equal(text, words.join(''));
    assert.equal(finish, 'stop');
  });
});
