/**
 * Logs (issue 16, item 3): JSON lines through nestjs-pino, the request id on every line logged while
 * a request is served, the job's and task's ids on every line of a job, a task's life at info, and
 * no secret in any line (API key, admin token, the signature of a signed media link).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { redactUrl } from '../../src/app/logger.js';
import { createAudio, speechBody, waitForAudio } from '../audio/audio-helpers.js';
import { connectReady, openSession } from '../realtime/realtime-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../support/test-app.js';

type Line = Record<string, unknown> & { msg?: string; reqId?: string; taskId?: string; jobId?: string; level: number };

/** Every line the app writes, parsed (a line that is not JSON fails the test). */
class LogLines extends Writable {
  readonly lines: Line[] = [];
  readonly raw: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const text of chunk.toString('utf8').split('\n').filter(Boolean)) {
      this.raw.push(text);
      this.lines.push(JSON.parse(text) as Line);
    }
    done();
  }
}

describe('logs: JSON, request and job context, task life, no secrets', () => {
  const logs = new LogLines();
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'logging', env: { LOG_LEVEL: 'info' }, logDestination: logs });
    account = await createAccount(t, { creditUsd: 5 });
  });
  after(async () => {
    await t.close();
  });

  it('a request: its completion line and every line logged while it was served carry its x-request-id; the key is not logged', async () => {
    const created = await createAudio(t, account, speechBody({ prompt: 'Logged with the request id.' }), { 'x-request-id': 'trace-abc.123' });
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('x-request-id'), 'trace-abc.123');
    const taskId = created.body.id as string;

    const createdLine = logs.lines.find((l) => l.msg === 'task created' && l.taskId === taskId);
    assert.ok(createdLine, 'the task creation is logged at info');
    assert.equal(createdLine.level, 30);
    assert.equal(createdLine.reqId, 'trace-abc.123', 'a line logged while serving the request carries its id');

    const completed = await eventually(
      async () => logs.lines.find((l) => l.msg === 'request completed' && l.reqId === 'trace-abc.123'),
      (line) => line !== undefined,
      'the request to be logged on completion',
    );
    assert.ok(completed, 'the request itself is logged once on completion');
    assert.deepEqual((completed as { res?: unknown }).res, { statusCode: 200 });
    assert.equal(logs.lines.filter((l) => l.msg === 'request completed' && l.reqId === 'trace-abc.123').length, 1);

    // The job's lines carry the job and the task, and the task's whole life is there.
    await waitForAudio(t, account, taskId);
    const jobLines = logs.lines.filter((l) => l.jobId !== undefined && l.taskId === taskId);
    assert.ok(jobLines.length >= 3, 'the job logged its steps');
    for (const line of jobLines) assert.equal(line.queue, 'audio');
    const life = logs.lines.filter((l) => l.taskId === taskId && (l.msg === 'task state' || l.msg === 'task created')).map((l) => l.status).filter(Boolean);
    assert.deepEqual([life[0], life.at(-1)], ['queued', 'succeeded']);
    assert.ok(jobLines.some((l) => l.msg === 'hold settled' && typeof l.capturedUsd === 'number'), 'the settlement is logged in the job');

    assert.ok(!logs.raw.some((text) => text.includes(account.key)), 'no line holds the API key');
  });

  it('the signature of a signed media link and the admin token never reach the log', async () => {
    const done = await waitForAudio(t, account, (await createAudio(t, account, speechBody({ prompt: 'A link to fetch.' }))).body.id as string);
    const link = new URL(done.outputs.audios[0]!.url);
    const signature = link.searchParams.get('sig');
    assert.ok(signature, 'media links are signed with sig=');
    const fetched = await t.request(`${link.pathname}${link.search}`, { headers: { 'x-request-id': 'media-fetch' } });
    assert.equal(fetched.status, 200);
    await fetched.arrayBuffer(); // the request is logged once its response has been sent whole
    assert.equal((await t.request('/admin/v1/workspaces', { admin: true, headers: { 'x-request-id': 'admin-list' } })).status, 200);

    const media = (await eventually(
      async () => logs.lines.find((l) => l.msg === 'request completed' && l.reqId === 'media-fetch'),
      (line) => line !== undefined,
      'the media request to be logged',
    )) as { req?: { url?: string } };
    assert.ok(media.req?.url?.includes('sig=[redacted]'), `the link's path is logged, its signature is not: ${media.req?.url}`);
    assert.ok(!logs.raw.some((text) => text.includes(signature)), 'no line holds the signature');
    assert.ok(!logs.raw.some((text) => text.includes(TEST_ADMIN_TOKEN)), 'no line holds the admin token');
  });

  it("a realtime client's protocol fault (an oversized frame, closed 1009) is a warning, not an error line", async () => {
    const session = await openSession(t, account);
    const { client } = await connectReady(session.url, session.token);
    const from = logs.lines.length;
    client.send({ type: 'turn.commit', turnId: 'big', text: 'x'.repeat(40_000) });
    assert.equal((await client.closed).code, 1009);
    const fault = await eventually(
      async () => logs.lines.slice(from).find((l) => typeof l.msg === 'string' && l.msg.includes('broke the protocol')),
      (line) => line !== undefined,
      'the warning line',
    );
    assert.equal(fault!.level, 40);
    assert.deepEqual(logs.lines.slice(from).filter((l) => l.level >= 50), []);
    await t.request(`/v1/audio/realtime/sessions/${encodeURIComponent(session.sessionId)}`, { method: 'DELETE', key: account.key });
  });

  it('redactUrl keeps the path and the other parameters', () => {
    assert.equal(redactUrl('/media/v/a.mp3?exp=1&sig=abc'), '/media/v/a.mp3?exp=1&sig=[redacted]');
    assert.equal(redactUrl('/x?X-Amz-Signature=1&X-Amz-Credential=2&a=b'), '/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&a=b');
    assert.equal(redactUrl('/x?Sig=1&token=2'), '/x?Sig=[redacted]&token=[redacted]');
    assert.equal(redactUrl('/health/live'), '/health/live');
  });
});
