import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GeminiVideoAdapter, mp4DurationSeconds, renderTestClip, type VideoGenerationRequest } from '../../libs/providers/index.js';
import { VideoTaskRunner } from '../../src/modules/video/video-task.runner.js';
import { FakeGeminiVideoServer } from '../fakes/gemini-video-server.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { ffmpegPath } from './support/media-fixtures.js';
import { createTask, getTask, holdOf, wallet, waitForTerminal } from './support/video-helpers.js';

const request = (prompt: string, taskId = 'omni:00000000-0000-4000-8000-000000000001'): VideoGenerationRequest => ({
  taskId,
  model: 'vendor-omni-1.1-flash-preview',
  mode: 'image_first_frame',
  prompt,
  durationSeconds: 5,
  resolution: '720p',
  ratio: '9:16',
  assets: [{ role: 'firstFrameImage', uri: 'https://x/a.png', mimeType: 'image/png', bytes: Buffer.from([0x89, 0x50]) }],
});

describe('gemini-video adapter against the fake upstream', () => {
  let fake: FakeGeminiVideoServer;
  let adapter: GeminiVideoAdapter;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-gv-'));
    const clip = join(dir, 'clip.mp4');
    await renderTestClip(await ffmpegPath(), { durationSeconds: 4, resolution: '360p', ratio: '16:9' }, clip);
    fake = new FakeGeminiVideoServer(readFileSync(clip));
    await fake.start();
    adapter = new GeminiVideoAdapter({ apiKey: fake.apiKey, baseUrl: fake.baseUrl });
    adapter.tuning.submitTimeoutMs = 3000;
  });
  after(async () => {
    await adapter.close();
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('submits the Veo wire format and gets an operation name', async () => {
    const outcome = await adapter.submit(request('a cat'));
    assert.equal(outcome.kind, 'accepted');
    const sent = fake.submits.at(-1)!;
    assert.equal(sent.model, 'veo-3.1-fast-generate-preview');
    assert.deepEqual(sent.body.instances[0].image, { bytesBase64Encoded: Buffer.from([0x89, 0x50]).toString('base64'), mimeType: 'image/png' });
    assert.deepEqual(sent.body.parameters, { aspectRatio: '9:16', resolution: '720p', durationSeconds: 6, sampleCount: 1 });
  });

  it('polls to done and downloads the MP4 through the storage redirect', async () => {
    const submitted = await adapter.submit(request('a dog'));
    assert.equal(submitted.kind, 'accepted');
    const polled = await adapter.poll(submitted.kind === 'accepted' ? submitted.operation : '', request('a dog'), 0);
    assert.equal(polled.kind, 'succeeded');
    const path = join(dir, 'out.mp4');
    const { bytes } = await adapter.download(polled.kind === 'succeeded' ? polled.output : {}, request('a dog'), path);
    assert.ok(bytes > 1000);
    assert.ok(Math.abs(mp4DurationSeconds(readFileSync(path))! - 4) < 0.1);
  });

  it('a slow operation reports running with a growing backoff, then succeeds', async () => {
    adapter.tuning.pollBaseMs = 100;
    const submitted = await adapter.submit(request('fake:slow'));
    assert.equal(submitted.kind, 'accepted');
    const op = submitted.kind === 'accepted' ? submitted.operation : '';
    const first = await adapter.poll(op, request('fake:slow'), 0);
    const second = await adapter.poll(op, request('fake:slow'), 1);
    assert.equal(first.kind, 'running');
    assert.equal(second.kind, 'running');
    assert.ok(first.kind === 'running' && second.kind === 'running' && second.retryAfterMs! > first.retryAfterMs!);
    await adapter.poll(op, request('fake:slow'), 2);
    assert.equal((await adapter.poll(op, request('fake:slow'), 3)).kind, 'succeeded');
  });

  it('429 is a retryable rejection honouring RetryInfo; 500 is retryable; 400 is final', async () => {
    const limited = await adapter.submit(request('fake:rate-limit'));
    assert.deepEqual(limited, { kind: 'rejected', reason: 'the video upstream is rate limited; retries were exhausted', retryable: true, retryAfterMs: 1000 });
    const failed = await adapter.submit(request('fake:server-error'));
    assert.equal(failed.kind, 'rejected');
    assert.ok(failed.kind === 'rejected' && failed.retryable);
    const bad = await adapter.submit(request('fake:bad-request'));
    assert.deepEqual(bad, { kind: 'rejected', reason: 'the video upstream refused the request as invalid', retryable: false, retryAfterMs: 5000 });
  });

  it('a safety refusal and an operation error become clean failure reasons (no upstream text)', async () => {
    for (const [prompt, reason] of [
      ['fake:safety', /content-safety filters/],
      ['fake:op-error', /refused the request as invalid or unsafe/],
    ] as const) {
      const submitted = await adapter.submit(request(prompt));
      const polled = await adapter.poll(submitted.kind === 'accepted' ? submitted.operation : '', request(prompt), 0);
      assert.equal(polled.kind, 'failed');
      assert.match(polled.kind === 'failed' ? polled.reason : '', reason);
      assert.doesNotMatch(polled.kind === 'failed' ? polled.reason : '', /internal detail|upstream-secret-reason/);
    }
  });

  it('a lost submit answer is uncertain (never retried by the adapter), and lookup cannot find it', async () => {
    const before = fake.submits.length;
    const outcome = await adapter.submit(request('fake:lose-answer'));
    assert.equal(outcome.kind, 'uncertain');
    assert.equal(fake.submits.length, before + 1);
    assert.equal((await adapter.lookup()).kind, 'unknown');
  });

  it('an unreachable upstream is a safe-to-retry rejection and opens the circuit after 5 failures', async () => {
    const dead = new GeminiVideoAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9' });
    try {
      for (let i = 0; i < 5; i++) {
        const outcome = await dead.submit(request('x'));
        assert.equal(outcome.kind, 'rejected');
        assert.ok(outcome.kind === 'rejected' && outcome.retryable);
      }
      assert.equal(dead.available(), false);
    } finally {
      await dead.close();
    }
  });

  it('an unknown operation is a failure; a malformed name is refused without a request', async () => {
    assert.equal((await adapter.poll('models/veo/operations/doesnotexist', request('x'), 0)).kind, 'failed');
    assert.equal((await adapter.poll('../../etc/passwd', request('x'), 0)).kind, 'failed');
  });
});

describe('video tasks routed to the live gemini-video adapter (fake upstream)', () => {
  let fake: FakeGeminiVideoServer;
  let t: TestApp;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-gv-'));
    const clip = join(dir, 'clip.mp4');
    await renderTestClip(await ffmpegPath(), { durationSeconds: 8, resolution: '360p', ratio: '16:9' }, clip);
    fake = new FakeGeminiVideoServer(readFileSync(clip));
    await fake.start();
    t = await bootTestApp({ label: 'videolive', env: { GEMINI_API_KEY: fake.apiKey, GEMINI_BASE_URL: fake.baseUrl } });
    const adapter = t.app.get(GeminiVideoAdapter);
    adapter.tuning.pollBaseMs = 100;
    adapter.tuning.retryBaseMs = 100;
  });
  after(async () => {
    await t.close();
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('success: the upstream video is stored and charged on its measured 8 s', async () => {
    const account = await createAccount(t, { creditUsd: 10 });
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'a slow pan fake:slow', controls: { duration: 8 } });
    assert.equal(created.status, 200);
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(fake.submits.filter((s) => s.body.instances[0].prompt === 'a slow pan fake:slow').length, 1);
    const hold = await holdOf(t, task.id);
    assert.equal(hold.captured, 640_000n); // 8 s × 0.08 USD
    assert.equal((await wallet(t, account)).balanceUsd, 9.36);
  });

  it('a transient 429 on submit is retried (the upstream answered: nothing was accepted) and succeeds', async () => {
    const account = await createAccount(t, { creditUsd: 10 });
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'retry me fake:rate-limit-once' });
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'succeeded', task.failureReason);
    assert.equal(fake.submits.filter((s) => s.body.instances[0].prompt === 'retry me fake:rate-limit-once').length, 2);
  });

  it('a safety refusal fails the task with a clean reason and releases the hold', async () => {
    const account = await createAccount(t, { creditUsd: 10 });
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'nope fake:safety' });
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'failed');
    assert.match(task.failureReason ?? '', /content-safety/);
    assert.equal((await holdOf(t, task.id)).status, 'released');
    assert.deepEqual(await wallet(t, account), { balanceUsd: 10, heldUsd: 0, availableUsd: 10 });
  });

  it('a lost submit answer puts the task in reconciliation and it is never sent again', async () => {
    const account = await createAccount(t, { creditUsd: 10 });
    const created = await createTask(t, account, { model: 'vendor-omni-flash-preview', prompt: 'lost fake:lose-answer' });
    const seen = await eventually(() => getTask(t, account, created.body.id), (task) => task.phase === 'reconciliationRequired', 'the task entering reconciliation', 15_000);
    assert.equal(seen.phase, 'reconciliationRequired');
    assert.equal(seen.status, 'running');
    assert.equal(fake.submits.filter((s) => s.body.instances[0].prompt === 'lost fake:lose-answer').length, 1);
    assert.equal((await holdOf(t, created.body.id)).status, 'open');

    // Gemini cannot be asked "did you get this?": once the give-up window has passed since the
    // submit, the task fails and the hold is released, still without a second submit.
    const before = await wallet(t, account);
    await t.db.query(`UPDATE video_task SET submitted_at = now() - interval '16 minutes' WHERE id = $1`, [created.body.id]);
    await t.app.get(VideoTaskRunner).run(created.body.id);
    const task = await waitForTerminal(t, account, created.body.id);
    assert.equal(task.status, 'failed');
    assert.match(task.failureReason ?? '', /never confirmed that it accepted/);
    assert.equal((await holdOf(t, created.body.id)).status, 'released');
    assert.equal((await wallet(t, account)).balanceUsd, before.balanceUsd);
    assert.equal((await wallet(t, account)).heldUsd, 0);
    assert.equal(fake.submits.filter((s) => s.body.instances[0].prompt === 'lost fake:lose-answer').length, 1);
  });
});
