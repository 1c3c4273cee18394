/**
 * Attack: a production deployment that is missing an upstream credential. Before the fix, a
 * model without live credentials was served by the in-process sandbox for every key, so a
 * `svc_live_` key in production was charged real prices for generated-looking fakes.
 *
 * How: the whole app is booted with NODE_ENV=production (with the secrets production demands)
 * and no GEMINI_API_KEY. A live key calls both text operations, sync and streaming, and video
 * creation: each must answer 503 `<domain>.unavailable` and change nothing (wallet, holds,
 * ledger, task rows, queued jobs). A `svc_test_` key on the same app keeps the sandbox. A second
 * production app with GEMINI_API_KEY pointing at the fake Gemini server shows the rule does not
 * block a configured live adapter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Queues } from '../../src/queue/queues.js';
import { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { PRODUCTION_ENV } from '../support/production-env.js';
import { fakeGeminiSuite, openaiFor, textHolds } from '../text/text-helpers.js';
import { createTask, wallet } from '../video/support/video-helpers.js';
import { VIDEO_QUEUE } from '../../src/modules/video/video-jobs.js';


const TEXT_MODEL = 'vendor-3.8-flash';
const VIDEO_MODEL = 'vendor-omni-1.1-flash-preview';

const TEXT_CALLS = [
  { path: '/api/svc/v1/chat/completions', body: { model: TEXT_MODEL, messages: [{ role: 'user', content: 'Hello' }] } },
  { path: '/api/svc/v1/responses', body: { model: TEXT_MODEL, input: 'Hello' } },
].flatMap((call) => [false, true].map((stream) => ({ ...call, stream, label: `${call.path} stream=${stream}` })));

async function videoJobCount(t: TestApp): Promise<number> {
  const counts = await t.app.get(Queues).get(VIDEO_QUEUE).getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed');
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

async function rowCount(t: TestApp, sql: string, params: unknown[]): Promise<number> {
  return Number((await t.db.query<{ n: string }>(sql, params))[0]!.n);
}

describe('production without GEMINI_API_KEY: live keys get 503, test keys the sandbox', () => {
  let t: TestApp;
  let live: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'prodnokey', env: PRODUCTION_ENV });
    assert.equal(t.config.isProduction, true);
    assert.equal(t.config.env.GEMINI_API_KEY, undefined);
    live = await createAccount(t, { creditUsd: 10 });
  });
  after(async () => {
    await t.close();
  });

  it('answers 503 text.unavailable on both text operations, sync and streaming, holding nothing', async () => {
    for (const call of TEXT_CALLS) {
      const response = await t.request(call.path, { method: 'POST', key: live.key, json: { ...call.body, stream: call.stream } });
      assert.equal(response.status, 503, call.label);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/, call.label);
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'text.unavailable', call.label);
      assert.match(body.error.message, /vendor-3\.8-flash is not available/, call.label);
    }
    // The official SDK sees the same refusal as an APIError.
    await assert.rejects(openaiFor(t, live.key).chat.completions.create({ model: TEXT_MODEL, messages: [{ role: 'user', content: 'Hi' }] }), (e: any) => {
      assert.equal(e.status, 503);
      assert.equal(e.error.code, 'text.unavailable');
      return true;
    });
    assert.deepEqual(await wallet(t, live), { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
    assert.deepEqual(await textHolds(t, live.workspaceId), []);
  });

  it('answers 503 video.unavailable on video creation: no hold, no task row, no job', async () => {
    const answer = await createTask(t, live, { model: VIDEO_MODEL, prompt: 'a red fox running through snow' });
    assert.equal(answer.status, 503);
    assert.equal(answer.body.error.code, 'video.unavailable');
    assert.match(answer.body.error.message, /vendor-omni-1\.1-flash-preview is not available/);
    assert.deepEqual(await wallet(t, live), { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
    assert.equal(await rowCount(t, 'SELECT count(*)::text AS n FROM video_task WHERE api_key_id = $1', [live.keyId]), 0);
    assert.equal(await videoJobCount(t), 0);
  });

  it('left the live wallet untouched: no hold, and the credit is the only ledger entry', async () => {
    assert.equal(await rowCount(t, 'SELECT count(*)::text AS n FROM hold WHERE workspace_id = $1', [live.workspaceId]), 0);
    const kinds = await t.db.query<{ kind: string }>('SELECT kind FROM ledger_entry WHERE workspace_id = $1', [live.workspaceId]);
    assert.deepEqual(kinds.map((row) => row.kind), ['credit']);
  });

  it('keeps the sandbox for svc_test_ keys: text (sync and streaming) and video answer 200', async () => {
    const test = await createAccount(t, { creditUsd: 10, environment: 'test' });
    assert.match(test.key, /^svc_test_/);
    for (const call of TEXT_CALLS) {
      const response = await t.request(call.path, { method: 'POST', key: test.key, json: { ...call.body, stream: call.stream } });
      assert.equal(response.status, 200, call.label);
      const text = await response.text();
      assert.match(text, call.stream ? (call.path.endsWith('responses') ? /event: response\.completed/ : /data: \[DONE\]/) : /"usage"/, call.label);
    }
    const video = await createTask(t, test, { model: VIDEO_MODEL, prompt: 'a red fox [sandbox:delay=60000]' });
    assert.equal(video.status, 200);
    const rows = await t.db.query<{ adapter: string }>('SELECT adapter FROM video_task WHERE id = $1', [video.body.id]);
    assert.deepEqual(rows, [{ adapter: 'sandbox' }]);
    assert.equal(await videoJobCount(t), 1);
  });
});

describe('production with GEMINI_API_KEY: live keys are served by the live adapter', () => {
  let fake: FakeGeminiServer;
  let t: TestApp;
  let live: TestAccount;

  // API role only: the video task is created and routed here; no worker submits it to the text fake.
  fakeGeminiSuite({ label: 'prodkey', creditUsd: 10, env: { ...PRODUCTION_ENV, APP_ROLE: 'api' } }, (booted) => ({ t, account: live, fake } = booted));

  it('answers 200 through the fake Gemini upstream, sync and streaming', async () => {
    const client = openaiFor(t, live.key);
    const answer = await client.chat.completions.create({ model: TEXT_MODEL, messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(answer.choices[0]!.message.content, 'Hello from the fake upstream.');
    const stream = await client.responses.create({ model: TEXT_MODEL, input: 'Hello', stream: true });
    let streamed = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') streamed += event.delta;
    assert.equal(streamed, 'Hello from the fake upstream.');
    assert.deepEqual(
      fake.requests.map((r) => r.path),
      ['/v1beta/models/gemini-3.8-flash:generateContent', '/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse'],
    );
    assert.deepEqual((await textHolds(t, live.workspaceId)).map((h) => h.status), ['settled', 'settled']);
  });

  it('routes live video creation to the live adapter', async () => {
    const video = await createTask(t, live, { model: VIDEO_MODEL, prompt: 'a red fox running through snow' });
    assert.equal(video.status, 200);
    const rows = await t.db.query<{ adapter: string }>('SELECT adapter FROM video_task WHERE id = $1', [video.body.id]);
    assert.deepEqual(rows, [{ adapter: 'gemini-video' }]);
  });
});
