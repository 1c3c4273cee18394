import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { waitForTaskPhase, WorkerChildren } from '../support/worker-children.js';
import { createAudio, download, getAudio, ledgerOf, speechBody, voicesFor, waitForAudio } from './audio-helpers.js';

/**
 * A worker process is killed with SIGKILL while the upstream is synthesizing; Redis is flushed;
 * another worker boots. The lost answer is reconciled (never sent again): one file, one charge.
 */
describe('audio worker killed mid-task', () => {
  let api: TestApp;
  let account: TestAccount;
  const workers = new WorkerChildren(() => api);
  const extraApps: TestApp[] = [];

  before(async () => {
    api = await bootTestApp({ label: 'audiokill', env: { APP_ROLE: 'api' } });
    account = await createAccount(api, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    workers.killAll();
    for (const app of extraApps) await app.close();
    await api.close();
  });

  it('killed while synthesizing, Redis flushed: the next worker reconciles and ends with one audio file and one charge', async () => {
    const first = await workers.start();
    const prompt = 'kill me while I speak [sandbox:delay=4000]';
    const created = await createAudio(api, account, speechBody({ prompt, controls: { voiceId: voicesFor('voice_v4')[0]!.id, outputFormat: 'pcm_24000' } }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.id as string;
    await waitForTaskPhase(api, 'audio_task', id, 'synthesizing');
    await workers.kill(first);
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
