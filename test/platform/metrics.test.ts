/**
 * Metrics for operators (issue 16, item 8): upstream calls per adapter with their outcome and
 * latency, queue jobs by outcome with their duration, and /metrics behind METRICS_TOKEN when set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAudio, speechBody, waitForAudio } from '../audio/audio-helpers.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

const METRICS_TOKEN = 'scraper-token-0123456789abcdef';

describe('metrics: upstream calls, jobs, and a token on /metrics', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'metrics', env: { METRICS_TOKEN } });
    account = await createAccount(t, { creditUsd: 5 });
  });
  after(async () => {
    await t.close();
  });

  const scrape = async () => {
    const response = await t.request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(response.status, 200);
    return response.text();
  };

  it('refuses a scrape without the token, or with another, in the envelope', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer not-the-metrics-token-at-all' }, { authorization: `Basic ${METRICS_TOKEN}` }];
    for (const headers of attempts) {
      const response = await t.request('/metrics', { headers });
      assert.equal(response.status, 401);
      assert.deepEqual(await response.json(), { error: { code: 'request.unauthorized', message: 'a valid metrics token is required (METRICS_TOKEN)' } });
    }
  });

  it('counts and times the upstream call and the job of an audio task, ok and completed', async () => {
    const before = await scrape();
    const task = await createAudio(t, account, speechBody({ prompt: 'Counted and timed.' }));
    assert.equal(task.status, 200);
    assert.equal((await waitForAudio(t, account, task.body.id as string)).status, 'succeeded');
    const text = await scrape();

    const callLabels = '{capability="audio",adapter="sandbox",method="synthesize",outcome="ok"}';
    assert.equal(
      (metricSample(text, 'svc_upstream_calls_total', callLabels) ?? 0) - (metricSample(before, 'svc_upstream_calls_total', callLabels) ?? 0),
      1,
      'one call for one task',
    );
    assert.equal(metricSample(text, 'svc_upstream_call_duration_seconds_count', callLabels), metricSample(text, 'svc_upstream_calls_total', callLabels));

    const jobs = /^svc_jobs_total\{queue="audio",name="([\w.]+)",outcome="completed"\} (\d+)$/m.exec(text);
    assert.ok(jobs && Number(jobs[2]) >= 1, 'the audio job is counted as completed');
    assert.ok((metricSample(text, 'svc_job_duration_seconds_count', `{queue="audio",name="${jobs[1]}"}`) ?? 0) >= 1, 'and timed');
    assert.equal(metricSample(text, 'svc_jobs_total', `{queue="audio",name="${jobs[1]}",outcome="failed"}`), undefined);
  });

  it('counts an upstream refusal by the kind the adapter answered (the sandbox fails the synthesis: rejected)', async () => {
    const task = await createAudio(t, account, speechBody({ prompt: 'Fails upstream [sandbox:fail]' }));
    assert.equal(task.status, 200);
    assert.equal((await waitForAudio(t, account, task.body.id as string)).status, 'failed');
    const text = await scrape();
    assert.match(text, /^svc_upstream_calls_total\{capability="audio",adapter="sandbox",method="synthesize",outcome="rejected"\} [1-9]/m);
  });
});
