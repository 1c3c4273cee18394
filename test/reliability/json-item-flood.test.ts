/**
 * Attack: a text body at the 32 MiB limit made of millions of tiny JSON values (`[1,2],[1,2],…`).
 * It passes the depth limit, and JSON.parse then built ~11 million arrays on the event loop:
 * 2 to 20 s during which no other request was served, before any validation could refuse it.
 * How: the body is posted to the chat route; it must answer 400 `request.too_many_items`
 * (REQUEST_MAX_ITEMS, 100,000 by default, counted on the raw text before JSON.parse) and reserve
 * nothing, while a body just under the limit is served. The time to answer and the longest
 * event-loop stall are printed (figures, not timed assertions).
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { jsonShapeProblem } from '../../src/app/json-depth.js';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { fundedAppForSuite } from '../support/suite-app.js';

const MAX_ITEMS = 100_000;
const chat = (extra: string): string => `{"model":"vendor-3.8-flash","messages":[{"role":"user","content":"Hello"}]${extra}}`;
/** The chat body's own items: the body, the comma before messages, messages, the message, the comma in it, the comma before `extra`. */
const OWN_ITEMS = 6;

describe('a JSON body of millions of tiny values is refused before JSON.parse', () => {
  let t: TestApp;
  let account: TestAccount;

  fundedAppForSuite({ label: 'json-items', creditUsd: 5 }, (booted) => ({ t, account } = booted));

  async function post(body: string): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
    const response = await t.request('/api/svc/v1/chat/completions', { method: 'POST', key: account.key, headers: { 'content-type': 'application/json' }, body });
    return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
  }

  it('answers 400 request.too_many_items to 32 MiB of tiny arrays, without parsing them', async () => {
    const size = 32 * 1024 * 1024 - 4096;
    const flood = Buffer.from(chat(`,"metadata":{"list":[${'[1,2],'.repeat(size / 6)}[1]]}`)).toString('utf8');
    assert.equal(jsonShapeProblem(flood, 64, MAX_ITEMS), 'too_many_items');
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const answer = await post(flood);
    loop.disable();
    console.log(`32 MiB of tiny arrays: ${answer.status} in ${(performance.now() - started).toFixed(0)} ms, longest event-loop stall ${(loop.max / 1e6).toFixed(1)} ms`);
    assert.deepEqual(answer, {
      status: 400,
      body: { error: { code: 'request.too_many_items', message: `request body holds more than ${MAX_ITEMS} JSON items (objects, arrays, elements)` } },
    });
    const [row] = await t.db.query<{ holds: string }>('SELECT count(*) AS holds FROM hold WHERE workspace_id = $1', [account.workspaceId]);
    assert.equal(row!.holds, '0');
  });

  it('serves a body at the limit and refuses one item more', async () => {
    // `{"list":[n numbers]}` adds the object, the array and n - 1 commas: n + 1 items.
    const withNumbers = (n: number) => chat(`,"metadata":{"list":[${Array.from({ length: n }, () => '1').join(',')}]}`);
    const atLimit = withNumbers(MAX_ITEMS - OWN_ITEMS - 1);
    assert.equal(jsonShapeProblem(atLimit, 64, MAX_ITEMS), null);
    assert.equal(jsonShapeProblem(withNumbers(MAX_ITEMS - OWN_ITEMS), 64, MAX_ITEMS), 'too_many_items');
    const served = await post(atLimit);
    assert.equal(served.status, 200, JSON.stringify(served.body).slice(0, 300));
    assert.equal((await post(withNumbers(MAX_ITEMS - OWN_ITEMS))).body.error?.code, 'request.too_many_items');
  });
});
