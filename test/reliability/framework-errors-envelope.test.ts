/**
 * Attack: requests that Fastify's router or Node's HTTP parser refuse before any route runs —
 * a path parameter over Fastify's 100 characters, a malformed percent-escape, a 100 KB URL,
 * 20 KB of headers, a request line that is not HTTP, a body that never arrives. They answered
 * in Fastify's own shape (`{statusCode, code: "FST_ERR_…", error, message}`), the 414 and 400
 * quoting the whole URL back, instead of the spec's `{error:{code,message}}`.
 * How: each request is written as raw bytes on a TCP socket (fetch would normalise or refuse
 * it); the answer must be the envelope with a `request.` code and must not quote the URL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/factories.js';
import { rawHttp } from '../support/raw-http.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/** Put in every URL: the answer must not contain it. */
const MARKER = 'urlmarker';

describe('framework errors answer in the envelope, never quoting the URL', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'framework-errors', env: { REQUEST_TIMEOUT_MS: '1000' } });
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  const cases: Array<{ name: string; request: () => string; status: number; code: string }> = [
    {
      name: 'a path parameter over 100 characters',
      request: () => `GET /v1/contents/generations/tasks/${MARKER}${'a'.repeat(200)} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${account.key}\r\n\r\n`,
      status: 414,
      code: 'request.uri_too_long',
    },
    {
      name: 'a malformed percent-escape',
      request: () => `GET /v1/contents/generations/tasks/${MARKER}%zz HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${account.key}\r\n\r\n`,
      status: 400,
      code: 'request.bad_url',
    },
    {
      name: 'a 100 KB URL',
      request: () => `GET /v1/contents/generations/tasks?q=${MARKER}${'b'.repeat(100_000)} HTTP/1.1\r\nHost: t\r\n\r\n`,
      status: 431,
      code: 'request.header_too_large',
    },
    {
      name: '20 KB of headers',
      request: () => `GET /health/live?${MARKER} HTTP/1.1\r\nHost: t\r\nX-Padding: ${'c'.repeat(20_000)}\r\n\r\n`,
      status: 431,
      code: 'request.header_too_large',
    },
    {
      name: 'a request line that is not HTTP',
      request: () => `GET /${MARKER} NOT-HTTP\r\n\r\n`,
      status: 400,
      code: 'request.malformed_http',
    },
    {
      name: 'a body that never arrives (REQUEST_TIMEOUT_MS)',
      request: () =>
        `POST /api/svc/v1/chat/completions?${MARKER} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"mo`,
      status: 408,
      code: 'request.timeout',
    },
  ];

  for (const { name, request, status, code } of cases) {
    it(`answers ${status} ${code} to ${name}`, async () => {
      const answer = await rawHttp(t.baseUrl, request(), 10_000);
      console.log(`${name}: ${answer.raw.split('\r\n', 1)[0]} ${answer.body} (${answer.closedByServer ? 'closed' : 'kept open'}, ${answer.elapsedMs} ms)`);
      assert.equal(answer.status, status, answer.raw.slice(0, 300));
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
      const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
      assert.deepEqual(Object.keys(body), ['error']);
      assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message']);
      assert.equal(body.error.code, code);
      assert.ok(!answer.raw.toLowerCase().includes(MARKER), `the answer quotes the URL: ${answer.raw.slice(0, 300)}`);
      assert.ok(!answer.raw.includes('FST_'), 'no Fastify error code leaks');
    });
  }

  it('tags a router refusal with the request id, like every other answer', async () => {
    const answer = await rawHttp(t.baseUrl, `GET /v1/contents/generations/tasks/%zz HTTP/1.1\r\nHost: t\r\nX-Request-Id: bad-url-check\r\n\r\n`);
    assert.equal(answer.status, 400);
    assert.equal(answer.headers['x-request-id'], 'bad-url-check');
  });
});
