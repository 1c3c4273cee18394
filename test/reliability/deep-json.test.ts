/**
 * Attack: a small JSON body nested thousands of levels deep (`[[[[…]]]]` as a message's
 * content, a 10,000-deep `metadata`, a 3,000-level tool schema). Everything that walks the
 * body recurses — class-transformer in the validation pipe, the text translation, the
 * schema sanitiser — and overflowed the stack: 500 `*.internal_error` from depth 3000 on.
 * How: the bodies are posted to the real routes (text, video); each must answer 400
 * `request.too_deep` (REQUEST_MAX_DEPTH, 64 by default) and reserve nothing, while a body at
 * exactly the limit is still served. The check scans the raw text once, before JSON.parse:
 * its cost on 32 MiB text bodies is printed (a figure, not a timed assertion).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { exceedsJsonDepth } from '../../src/app/json-depth.js';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { fundedAppForSuite } from '../support/suite-app.js';

const MAX_DEPTH = 64;
const TOO_DEEP = { error: { code: 'request.too_deep', message: `request body nests objects and arrays deeper than ${MAX_DEPTH} levels` } };

const nestedArrays = (depth: number): string => `${'['.repeat(depth)}"deep"${']'.repeat(depth)}`;
const nestedObjects = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
function nestedSchema(levels: number): string {
  let schema = '{"type":"string"}';
  for (let i = 0; i < levels; i++) schema = `{"type":"object","properties":{"x":${schema}}}`;
  return schema;
}
/** A chat request (depth 3 itself: body, messages, message) with `extra` fields spliced in. */
const chat = (extra = ''): string => `{"model":"vendor-3.8-flash","messages":[{"role":"user","content":"Hello"}]${extra}}`;

describe('deeply nested JSON is refused before anything walks it', () => {
  let t: TestApp;
  let account: TestAccount;

  fundedAppForSuite({ label: 'deep-json', creditUsd: 5 }, (booted) => ({ t, account } = booted));

  async function post(path: string, body: string): Promise<{ status: number; body: unknown }> {
    const response = await t.request(path, { method: 'POST', key: account.key, headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, body: await response.json() };
  }

  const attacks: Array<{ name: string; path: string; body: () => string }> = [
    {
      name: 'message content nested 3,000 deep',
      path: '/api/svc/v1/chat/completions',
      body: () => `{"model":"vendor-3.8-flash","messages":[{"role":"user","content":${nestedArrays(3000)}}]}`,
    },
    {
      name: 'message content nested 10,000 deep',
      path: '/api/svc/v1/chat/completions',
      body: () => `{"model":"vendor-3.8-flash","messages":[{"role":"user","content":${nestedArrays(10_000)}}]}`,
    },
    { name: 'metadata nested 10,000 deep', path: '/api/svc/v1/chat/completions', body: () => chat(`,"metadata":${nestedObjects(10_000)}`) },
    {
      name: 'a tool schema 3,000 levels deep',
      path: '/api/svc/v1/chat/completions',
      body: () => chat(`,"tools":[{"type":"function","function":{"name":"f","parameters":${nestedSchema(3000)}}}]`),
    },
    {
      name: 'Responses input nested 10,000 deep',
      path: '/api/svc/v1/responses',
      body: () => `{"model":"vendor-3.8-flash","input":${nestedArrays(10_000)}}`,
    },
    { name: 'a video task prompt nested 3,000 deep', path: '/v1/contents/generations/tasks', body: () => `{"model":"omni-video","prompt":${nestedArrays(3000)}}` },
  ];

  for (const { name, path, body } of attacks) {
    it(`answers 400 request.too_deep to ${name}`, async () => {
      assert.deepEqual(await post(path, body()), { status: 400, body: TOO_DEEP });
    });
  }

  it('reserves, writes and enqueues nothing for a refused body', async () => {
    const [row] = await t.db.query<{ holds: string; tasks: string; entries: string }>(
      `SELECT (SELECT count(*) FROM hold WHERE workspace_id = $1) AS holds,
              (SELECT count(*) FROM video_task WHERE workspace_id = $1) AS tasks,
              (SELECT count(*) FROM ledger_entry WHERE workspace_id = $1) AS entries`,
      [account.workspaceId],
    );
    assert.deepEqual(row, { holds: '0', tasks: '0', entries: '1' }, 'only the test credit');
  });

  it('serves a body nested exactly to the limit, and refuses one level more', async () => {
    // The chat body is depth 1 and metadata adds one level per object: 1 + 63 = 64.
    const atLimit = await post('/api/svc/v1/chat/completions', chat(`,"metadata":${nestedObjects(MAX_DEPTH - 1)}`));
    assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body));
    assert.deepEqual(await post('/api/svc/v1/chat/completions', chat(`,"metadata":${nestedObjects(MAX_DEPTH)}`)), { status: 400, body: TOO_DEEP });
  });

  it('keeps the other body answers: malformed JSON is still request.invalid_json, brackets in strings do not count', async () => {
    const malformed = await post('/api/svc/v1/chat/completions', `${'['.repeat(10)}`);
    assert.equal(malformed.status, 400);
    assert.equal((malformed.body as { error: { code: string } }).error.code, 'request.invalid_json');
    const bracketsInText = await post('/api/svc/v1/chat/completions', chat().replace('"Hello"', JSON.stringify(`[{"${'[{'.repeat(5000)}`)));
    assert.equal(bracketsInText.status, 200, JSON.stringify(bracketsInText.body));
  });

  it('scans a 32 MiB text body in one pass (figures printed)', async () => {
    const size = 32 * 1024 * 1024 - 4096;
    // Flat strings decoded from bytes, as Fastify hands the body over (a concatenated string
    // would be flattened on the first read, inside the measurement).
    const decoded = (text: string): string => Buffer.from(text).toString('utf8');
    const shapes: Record<string, string> = {
      'one long string (inline media)': decoded(chat(`,"metadata":{"blob":"${'A'.repeat(size)}"}`)),
      'many short strings': decoded(chat(`,"metadata":{"list":[${'"ab",'.repeat(size / 5)}"ab"]}`)),
      'many small arrays': decoded(chat(`,"metadata":{"list":[${'[1,2],'.repeat(size / 6)}[1]]}`)),
      'escaped quotes': decoded(chat(`,"metadata":{"text":"${'\\"'.repeat(size / 2)}"}`)),
    };
    for (const [shape, text] of Object.entries(shapes)) {
      const started = performance.now();
      assert.equal(exceedsJsonDepth(text, MAX_DEPTH), false, shape);
      console.log(`32 MiB, ${shape}: depth scan ${(performance.now() - started).toFixed(1)} ms`);
    }
    // Through the server: the whole body passes the scan and the parser (the sandbox answers).
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const answer = await post('/api/svc/v1/chat/completions', shapes['one long string (inline media)']!);
    loop.disable();
    console.log(`32 MiB chat request: ${answer.status} in ${(performance.now() - started).toFixed(0)} ms, longest event-loop stall ${(loop.max / 1e6).toFixed(1)} ms`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  });
});
