import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '../support/eventually.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestApp } from '../support/test-app.js';
import { createAudio, download, getAudio, ledgerOf, speechBody, voicesFor, waitForAudio } from './audio-helpers.js';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * A worker process is killed with SIGKILL while the upstream is synthesizing; Redis is flushed;
 * another worker boots. The lost answer is reconciled (never sent again): one file, one charge.
 */
describe('audio worker killed mid-task', () => {
  let api: TestApp;
  let account: TestAccount;
  const children: ChildProcess[] = [];
  const extraApps: TestApp[] = [];

  before(async () => {
    api = await bootTestApp({ label: 'audiokill', env: { APP_ROLE: 'api' } });
    account = await createAccount(api, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const app of extraApps) await app.close();
    await api.close();
  });

  async function startChildWorker(): Promise<ChildProcess> {
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: api.db.url,
      DATABASE_CREATE_IF_MISSING: 'false',
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: api.queuePrefix,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MEDIA_DIR: api.mediaDir,
      PUBLIC_BASE_URL: api.baseUrl,
      LOG_LEVEL: 'silent',
      DEMO_SEED: 'false',
    };
    const child = fork(join(here, '..', 'video', 'support', 'worker-child.js'), [], { env: { ...process.env, SVC_CHILD_ENV: JSON.stringify(env) }, stdio: 'inherit' });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`worker child exited early (${code})`)));
    });
    return child;
  }

  it('killed while synthesizing, Redis flushed: the next worker reconciles and ends with one audio file and one charge', async () => {
    const first = await startChildWorker();
    const prompt = 'kill me while I speak [sandbox:delay=4000]';
    const created = await createAudio(api, account, speechBody({ prompt, controls: { voiceId: voicesFor('voice_v4')[0]!.id, outputFormat: 'pcm_24000' } }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    const phaseOf = async () => (await api.db.query<{ phase: string | null }>('SELECT phase FROM audio_task WHERE id = $1', [id]))[0]?.phase;
    await eventually(phaseOf, (phase) => phase === 'synthesizing', `task ${id} synthesizing`, 30_000);
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    await exited;
    assert.equal((await getAudio(api, account, id)).status, 'processing');
    await api.flushRedis();
    // A worker boots: its boot-time reconcile finds the task's job missing and enqueues it again.
    const second = await bootTestApp({ label: 'audiokill2', db: api.db, env: { APP_ROLE: 'worker', QUEUE_PREFIX: api.queuePrefix, MEDIA_DIR: api.mediaDir } });
    extraApps.push(second);
    const done = await waitForAudio(api, account, id, 60_000);
    assert.equal(done.status, 'succeeded', done.failureReason);
    assert.equal(done.outputs.audios.length, 1);
    const file = await download(done.outputs.audios[0]!.url);
    const billable = 'kill me while I speak'.length;
    assert.equal(file.bytes.length, Math.round(2 * 24_000 * Math.max(0.5, billable / 15)));
    const ledger = await ledgerOf(api, id);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.captures, 1);
    assert.equal(ledger.captured, BigInt(240 * billable));
    assert.equal(ledger.captured + ledger.released, ledger.amount);
    const objects = await api.db.query(`SELECT 1 FROM media_object WHERE key LIKE $1 AND deleted_at IS NULL`, [`audio/%/${id.slice('audio:'.length)}.pcm`]);
    assert.equal(objects.length, 1);
  });
});
