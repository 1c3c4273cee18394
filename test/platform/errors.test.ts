import { Logger, type LoggerService } from '@nestjs/common';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { SAMPLE_OWNED_TABLE_SQL, SampleFailureController, SampleOwnedModule } from './sample-owned.module.js';

interface ErrorBody {
  error: { code: string; message: string; errorId?: string };
}

const BODY_LIMIT = 4096;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('errors and requests: envelopes, validation, limits, request ids', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'errors', imports: [SampleOwnedModule], env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    await t.db.query(SAMPLE_OWNED_TABLE_SQL);
    account = await createAccount(t, { creditUsd: 1 });
  });
  after(async () => {
    await t.close();
  });

  async function post(body: string | object, headers: Record<string, string> = {}): Promise<{ status: number; body: ErrorBody }> {
    const response = await t.request('/api/svc/v1/test-owned', {
      method: 'POST',
      key: account.key,
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as ErrorBody };
  }

  /** Nothing may be reserved or written when a request is refused before the handler's work. */
  async function assertNothingWritten(): Promise<void> {
    const [row] = await t.db.query<{ holds: string; rows: string }>(
      `SELECT (SELECT count(*) FROM hold WHERE workspace_id = $1) AS holds, (SELECT count(*) FROM test_owned WHERE workspace_id = $1) AS rows`,
      [account.workspaceId],
    );
    assert.deepEqual(row, { holds: '0', rows: '0' });
  }

  it('answers 400 naming an unknown field, at the top level and nested', async () => {
    assert.deepEqual(await post({ label: 'a', costMicros: 10, colour: 'red' }), {
      status: 400,
      body: { error: { code: 'request.unknown_field', message: 'colour: unknown field' } },
    });
    assert.deepEqual(await post({ label: 'a', costMicros: 10, options: { loud: true, volume: 11 } }), {
      status: 400,
      body: { error: { code: 'request.unknown_field', message: 'options.volume: unknown field' } },
    });
    // Names of Object.prototype members, which class-transformer would skip (or choke on).
    for (const [body, path] of [
      [{ label: 'a', costMicros: 10, constructor: 'x' }, 'constructor'],
      [{ label: 'a', costMicros: 10, toString: 1 }, 'toString'],
      [{ label: 'a', costMicros: 10, options: { hasOwnProperty: true } }, 'options.hasOwnProperty'],
      [{ label: 'a', costMicros: 10, options: { constructor: 1 } }, 'options.constructor'],
    ] as const) {
      assert.deepEqual(await post(body), { status: 400, body: { error: { code: 'request.unknown_field', message: `${path}: unknown field` } } }, path);
    }
    await assertNothingWritten();
  });

  it('answers 400 naming a field of the wrong type, missing or out of range', async () => {
    const cases: Array<[object, string]> = [
      [{ label: 5, costMicros: 10 }, 'label: must be a string'],
      [{ label: 'a', costMicros: '10' }, 'costMicros: must be an integer number'],
      [{ label: 'a' }, 'costMicros: is required'],
      [{ label: 'a', costMicros: 0 }, 'costMicros: must not be less than 1'],
      [{ label: 'x'.repeat(101), costMicros: 10 }, 'label: must be shorter than or equal to 100 characters'],
      [{ label: 'a', costMicros: 10, options: { loud: 'very' } }, 'options.loud: must be a boolean value'],
    ];
    for (const [body, message] of cases) {
      assert.deepEqual(await post(body), { status: 400, body: { error: { code: 'request.invalid_field', message } } }, JSON.stringify(body));
    }

    for (const body of [[1, 2], 'null', '"text"', '42']) {
      const notObject = await post(body);
      assert.equal(notObject.status, 400, JSON.stringify(body));
      assert.deepEqual(notObject.body, { error: { code: 'request.invalid_field', message: 'request body must be a JSON object' } });
    }
    await assertNothingWritten();
  });

  it('answers 400 request.invalid_json to malformed JSON, on any route', async () => {
    for (const text of ['{"label": "a",', '{label: 1}', "{'a': 1}", '{"a": 1}}']) {
      const answer = await post(text);
      assert.equal(answer.status, 400, text);
      assert.deepEqual(Object.keys(answer.body.error).sort(), ['code', 'message']);
      assert.equal(answer.body.error.code, 'request.invalid_json', text);
    }
    // The body is parsed before the key is checked: a framing error answers the same without a key.
    const anonymous = await t.request('/api/svc/v1/test-owned', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(anonymous.status, 400);
    assert.equal(((await anonymous.json()) as ErrorBody).error.code, 'request.invalid_json');
    await assertNothingWritten();
  });

  it('answers 400 request.invalid_json to a body that is not UTF-8, and nothing is taken', async () => {
    // A JSON text whose string holds bytes that are no UTF-8: taken, they would be U+FFFD.
    const bytes = Buffer.concat([Buffer.from('{"label": "a'), Buffer.from([0xff, 0xfe]), Buffer.from('b", "costMicros": 10}')]);
    const response = await t.request('/api/svc/v1/test-owned', { method: 'POST', key: account.key, headers: { 'content-type': 'application/json' }, body: bytes });
    assert.deepEqual({ status: response.status, body: await response.json() }, {
      status: 400,
      body: { error: { code: 'request.invalid_json', message: 'request body is not valid UTF-8' } },
    });
    // Valid UTF-8 beyond ASCII (and a U+FFFD the client did send) is taken as it is.
    await assertNothingWritten();
    const other = await createAccount(t, { creditUsd: 1 });
    const taken = await t.request('/api/svc/v1/test-owned', { method: 'POST', key: other.key, json: { label: 'é\ufffd😀', costMicros: 10 } });
    assert.equal(taken.status, 200);
    assert.equal(((await taken.json()) as { label: string }).label, 'é\ufffd😀');
  });

  it('answers a __proto__ key with 400 unknown_field, not as malformed JSON', async () => {
    for (const text of ['{"label": "a", "costMicros": 10, "__proto__": {"admin": true}}', '{"label": "a", "costMicros": 10, "options": {"constructor": {"prototype": {}}}}']) {
      assert.deepEqual(await post(text), {
        status: 400,
        body: { error: { code: 'request.unknown_field', message: 'request body has a key that no request takes: __proto__, or constructor.prototype' } },
      }, text);
    }
    await assertNothingWritten();
  });

  it('takes an empty body sent as application/json as no body', async () => {
    const response = await t.request('/api/svc/v1/test-owned', { method: 'POST', key: account.key, headers: { 'content-type': 'application/json' }, body: '' });
    assert.deepEqual({ status: response.status, body: await response.json() }, {
      status: 400,
      body: { error: { code: 'request.invalid_field', message: 'request body must be a JSON object' } },
    });
    await assertNothingWritten();
  });

  it('answers 415 request.unsupported_media_type to a body that is not JSON', async () => {
    const answer = await post('<label>a</label>', { 'content-type': 'application/xml' });
    assert.deepEqual(answer, { status: 415, body: { error: { code: 'request.unsupported_media_type', message: 'send the body as application/json' } } });
    // JSON text sent as plain text or as a form (curl's default) is not taken either.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const refused = await post(JSON.stringify({ label: 'a', costMicros: 10 }), { 'content-type': type });
      assert.deepEqual(refused, { status: 415, body: { error: { code: 'request.unsupported_media_type', message: 'send the body as application/json' } } }, type);
    }
    await assertNothingWritten();
    await assertNothingWritten();
  });

  it('answers 413 request.body_too_large to a body over BODY_LIMIT_BYTES', async () => {
    const big = { label: 'x'.repeat(BODY_LIMIT), costMicros: 10 };
    const answer = await post(big);
    assert.equal(answer.status, 413);
    assert.deepEqual(answer.body, { error: { code: 'request.body_too_large', message: 'request body is larger than the limit' } });
    // Just under the limit is parsed (and then refused by validation: label is too long).
    const under = await post({ label: 'x'.repeat(BODY_LIMIT - 100), costMicros: 10 });
    assert.equal(under.status, 400);
    assert.equal(under.body.error.code, 'request.invalid_field');
    await assertNothingWritten();
  });

  it('answers an unexpected exception with 500, an errorId that is logged, and no internals', async () => {
    const logged: unknown[][] = [];
    const original = (Logger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
    const spy: LoggerService = {
      log: () => undefined,
      warn: () => undefined,
      error: (...args: unknown[]) => {
        logged.push(args);
      },
    };
    Logger.overrideLogger(spy);
    let response: Response;
    let text: string;
    try {
      response = await t.request('/api/svc/v1/test-failures/unexpected', { headers: { 'x-request-id': 'req-500-check' } });
      text = await response.text();
    } finally {
      if (original) Logger.overrideLogger(original);
    }

    assert.equal(response.status, 500);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const body = JSON.parse(text) as ErrorBody;
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'errorId', 'message']);
    assert.equal(body.error.code, 'request.internal_error');
    assert.match(body.error.errorId!, UUID);
    assert.ok(body.error.message.includes(body.error.errorId!), 'the message quotes the id');
    for (const secret of [SampleFailureController.SECRET, 'something broke', 'TypeError', 'at ', '.js:', 'stack']) {
      assert.ok(!text.includes(secret), `the body leaks "${secret}": ${text}`);
    }
    // The same id is in the log, with the request id and the error itself.
    const entry = logged.find((args) => JSON.stringify(args, (_k, v: unknown) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)).includes(body.error.errorId!));
    assert.ok(entry, `errorId not logged; logged: ${logged.length} entries`);
    const record = entry[0] as { errorId: string; reqId: string; err: Error };
    assert.equal(record.errorId, body.error.errorId);
    assert.equal(record.reqId, 'req-500-check');
    assert.ok(record.err instanceof TypeError);
    assert.match(record.err.stack ?? '', /something broke/);
  });

  it('echoes a given x-request-id and generates one otherwise', async () => {
    const given = await t.request('/health/live', { headers: { 'x-request-id': 'client-trace-42' } });
    assert.equal(given.headers.get('x-request-id'), 'client-trace-42');

    const generated = await t.request('/health/live');
    const id = generated.headers.get('x-request-id') ?? '';
    assert.match(id, UUID);
    const another = await t.request('/health/live');
    assert.notEqual(another.headers.get('x-request-id'), id);

    // An unsafe value (spaces, too long) is not reflected; a fresh id replaces it.
    for (const unsafe of ['has spaces in it', 'x'.repeat(200)]) {
      const response = await t.request('/health/live', { headers: { 'x-request-id': unsafe } });
      assert.match(response.headers.get('x-request-id') ?? '', UUID);
    }
    // Errors carry it too.
    const failed = await t.request('/api/svc/v1/wallet', { headers: { 'x-request-id': 'on-an-error' } });
    assert.equal(failed.status, 401);
    assert.equal(failed.headers.get('x-request-id'), 'on-an-error');
  });

  it('answers an unknown route with a 404 envelope', async () => {
    for (const [method, path] of [
      ['GET', '/no/such/route'],
      ['POST', '/api/svc/v1/nothing-here'],
      ['DELETE', '/api/svc/v1/wallet'],
    ] as const) {
      const response = await t.request(path, { method, key: account.key });
      assert.equal(response.status, 404, `${method} ${path}`);
      const body = (await response.json()) as ErrorBody;
      assert.deepEqual(Object.keys(body), ['error']);
      assert.equal(body.error.code, 'request.route_not_found', `${method} ${path}`);
      assert.match(body.error.message, new RegExp(`${method} ${path}`));
    }
  });
});
