import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GuardedHttpClient } from '../../libs/common/index.js';
import { type AlternateJobSpec, KlingAdapter, mp4DurationSeconds } from '../../libs/providers/index.js';
import { FakeKlingServer } from '../fakes/kling-server.js';

const http = new GuardedHttpClient({ allowHttp: true, allowPrivate: true });
const spec = (taskId: string, kind: AlternateJobSpec['kind'] = 'text2video'): AlternateJobSpec => ({
  taskId,
  model: 'kling-v2-5-turbo',
  kind,
  prompt: 'a kite',
  durationSeconds: 5,
  aspectRatio: '16:9',
  mode: 'std',
});
const taskId = () => `alt:${crypto.randomUUID()}`;

/** The live `kling` adapter against the fake Kling server (upstreams.md §3), which checks every JWT. */
describe('kling adapter against the fake Kling API', () => {
  const fake = new FakeKlingServer();
  let adapter: KlingAdapter;
  let dir = '';

  before(async () => {
    await fake.start();
    dir = await mkdtemp(join(tmpdir(), 'kling-adapter-'));
    adapter = new KlingAdapter({ accessKey: fake.accessKey, secretKey: fake.secretKey, baseUrl: fake.baseUrl, http });
  });
  after(async () => {
    await adapter.close();
    await http.close();
    await fake.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('signs every request with a short-lived HS256 JWT the fake accepts (iss, nbf, exp)', async () => {
    const id = taskId();
    const outcome = await adapter.create({ ...spec(id), callbackUrl: 'https://gateway.example/internal/alternate/callbacks' });
    assert.equal(outcome.kind, 'accepted');
    const { claims } = fake.creates.at(-1)!;
    const now = Math.floor(Date.now() / 1000);
    assert.equal(claims.iss, fake.accessKey);
    assert.ok(claims.nbf <= now && claims.nbf >= now - 10, 'nbf a few seconds back');
    assert.ok(claims.exp > now && claims.exp <= now + 300, 'exp at most five minutes ahead');
    assert.equal(fake.authFailures.length, 0);
  });

  it('a wrong secret key is refused by the upstream with 1002 (401)', async () => {
    const wrong = new KlingAdapter({ accessKey: fake.accessKey, secretKey: 'not-the-secret', baseUrl: fake.baseUrl, http });
    try {
      assert.deepEqual(await wrong.create(spec(taskId())), { kind: 'refused', upstreamCode: 1002, httpStatus: 401 });
    } finally {
      await wrong.close();
    }
  });

  it('creates image-to-video with raw Base64 frames and no aspect ratio', async () => {
    const id = taskId();
    const outcome = await adapter.create({ ...spec(id, 'image2video'), imageBase64: 'iVBORw0KGgo=', imageTailBase64: '/9j/4AAQ', negativePrompt: 'rain' });
    assert.equal(outcome.kind, 'accepted');
    const { kind, body } = fake.creates.at(-1)!;
    assert.equal(kind, 'image2video');
    assert.deepEqual(body, {
      model_name: 'kling-v2-5-turbo',
      prompt: 'a kite',
      negative_prompt: 'rain',
      mode: 'std',
      duration: '5',
      external_task_id: id,
      image: 'iVBORw0KGgo=',
      image_tail: '/9j/4AAQ',
    });
  });

  it('queries by task id and by external task id, then downloads the MP4', async () => {
    const id = taskId();
    const created = await adapter.create(spec(id));
    assert.equal(created.kind, 'accepted');
    const upstreamId = created.kind === 'accepted' ? created.upstreamTaskId : '';
    const first = await adapter.query(spec(id), upstreamId);
    assert.equal(first.kind === 'found' && first.task.status, 'processing');
    const second = await adapter.queryByExternalId(spec(id));
    assert.ok(second.kind === 'found');
    assert.equal(second.task.upstreamTaskId, upstreamId);
    assert.equal(second.task.externalTaskId, id);
    assert.equal(second.task.status, 'succeed');
    assert.equal(second.task.videoSeconds, 5);
    const path = join(dir, 'v.mp4');
    const { bytes } = await adapter.download(second.task.videoUrl!, spec(id), path, 64 * 1024 * 1024);
    assert.ok(bytes > 1000);
    assert.ok(Math.abs(mp4DurationSeconds(await readFile(path))! - 5) < 0.2);
  });

  it('an unknown task is not_found (1203)', async () => {
    assert.deepEqual(await adapter.queryByExternalId(spec(taskId())), { kind: 'not_found' });
  });

  it('every error code comes back as a refusal with the code and the upstream status', async () => {
    for (const [code, status] of [[1000, 401], [1100, 429], [1103, 403], [1200, 400], [1202, 404], [1300, 400], [1302, 429], [1304, 429], [5000, 500], [5001, 503], [5002, 504]] as const) {
      fake.createScript = [{ refuse: code }];
      assert.deepEqual(await adapter.create(spec(taskId())), { kind: 'refused', upstreamCode: code, httpStatus: status });
    }
  });

  it('a lost create answer is uncertain (never resent); the task exists under our id', async () => {
    const id = taskId();
    const before = fake.creates.length;
    fake.createScript = ['lose'];
    const outcome = await adapter.create(spec(id));
    assert.equal(outcome.kind, 'uncertain');
    assert.equal(fake.creates.length - before, 1);
    const found = await adapter.queryByExternalId(spec(id));
    assert.equal(found.kind, 'found');
  });

  it('a refused connection is retried, then refused without a code (never uncertain)', async () => {
    const closed = new KlingAdapter({ accessKey: 'a', secretKey: 'b', baseUrl: 'http://127.0.0.1:1', http });
    closed.tuning.createAttempts = 2;
    try {
      assert.deepEqual(await closed.create(spec(taskId())), { kind: 'refused', upstreamCode: null, httpStatus: 503 });
    } finally {
      await closed.close();
    }
  });
});
