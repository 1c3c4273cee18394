/**
 * Metrics for operators (issue 16, item 8): upstream calls per adapter with their outcome and
 * latency, queue jobs by outcome with their duration, and /metrics behind METRICS_TOKEN when set.
 * Issue 17: money captured on settlement by kind, and settlements of holds a crash lost.
 * Tasks by kind and status in the last hour (through the admin task directory, cached 10 s), and
 * the Grafana dashboard reading only metrics the app exposes.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAudio, speechBody, waitForAudio } from '../audio/audio-helpers.js';
import { ManualClock, usdToMicros } from '../../libs/common/index.js';
import { TASK_COUNTS_TTL_MS } from '../../src/modules/admin/task-metrics.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { loseHold } from '../support/lost-hold.js';
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

  it('counts money captured on settlement by kind, and lost holds charged directly', async () => {
    const before = await scrape();
    const captured = (text: string, kind: string) => metricSample(text, 'svc_money_captured_micros_total', `{kind="${kind}"}`) ?? 0;
    const lostCharged = (text: string) => metricSample(text, 'svc_wallet_lost_holds_charged_total') ?? 0;

    const response = await t.request('/api/svc/v1/chat/completions', {
      method: 'POST',
      key: account.key,
      json: { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: 'Counted by kind.' }] },
    });
    assert.equal(response.status, 200);
    const [text] = await t.db.query<{ captured: string }>(
      `SELECT captured_micros::text AS captured FROM hold WHERE workspace_id = $1 AND subject_type = 'text' ORDER BY created_at DESC LIMIT 1`,
      [account.workspaceId],
    );
    const afterText = await scrape();
    assert.ok(Number(text!.captured) > 0);
    assert.equal(captured(afterText, 'text') - captured(before, 'text'), Number(text!.captured), 'the text charge, under kind="text"');

    const wallet = t.app.get(WalletService);
    const input = { workspaceId: account.workspaceId, environment: 'live' as const, apiKeyId: account.keyId, amountMicros: usdToMicros(0.01), subjectType: 'metrics', subjectId: randomUUID() };
    const holdId = await wallet.hold(input);
    await loseHold(t.db, holdId);
    await wallet.settle(holdId, usdToMicros(0.004), 'charge', input);
    const afterLost = await scrape();
    assert.equal(lostCharged(afterLost) - lostCharged(before), 1, 'one lost hold charged');
    assert.equal(captured(afterLost, 'metrics'), Number(usdToMicros(0.004)), 'its charge counted under its kind');
  });
});

describe('metrics: tasks by kind and status in the last hour', () => {
  // The app's clock is the test's: the 10 s cache and the hour move only when the test says so.
  // The API role alone: no worker runs the tasks, so they stay in the status they were created in.
  const clock = new ManualClock(new Date());
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'taskMetrics', clock, env: { APP_ROLE: 'api' } });
    account = await createAccount(t, { creditUsd: 5 });
  });
  after(async () => {
    await t.close();
  });

  const scrape = async () => {
    const response = await t.request('/metrics');
    assert.equal(response.status, 200);
    return response.text();
  };
  /** svc_tasks_last_hour of one kind: each status and its count. */
  const tasksOf = (text: string, kind: string) =>
    Object.fromEntries([...text.matchAll(new RegExp(`^svc_tasks_last_hour\\{kind="${kind}",status="([\\w.]+)"\\} (\\d+)$`, 'gm'))].map((m) => [m[1]!, Number(m[2])]));
  const audioTask = async () => {
    const task = await createAudio(t, account, speechBody({ prompt: 'Counted by kind and status.' }));
    assert.equal(task.status, 200);
    return task.body.status as string;
  };

  it('counts the tasks created in the hour by kind and status, read at most every 10 s, and marks no kind capped', async () => {
    const status = await audioTask();
    const first = await scrape();
    assert.deepEqual(tasksOf(first, 'audio'), { [status]: 1 });
    // Every registered kind is listed as not capped (the directory read all of its hour).
    for (const kind of ['audio', 'image', 'video']) assert.equal(metricSample(first, 'svc_tasks_last_hour_capped', `{kind="${kind}"}`), 0, kind);
    assert.match(first, /^# HELP svc_tasks_last_hour Tasks created in the last hour/m);

    // A second task within the cache's life: the scrape answers the same count, without a read.
    await audioTask();
    assert.deepEqual(tasksOf(await scrape(), 'audio'), { [status]: 1 });

    clock.advance(TASK_COUNTS_TTL_MS);
    assert.deepEqual(tasksOf(await scrape(), 'audio'), { [status]: 2 });

    // An hour later none is in the window: the series stays, at 0.
    clock.advance(3_600_000);
    assert.deepEqual(tasksOf(await scrape(), 'audio'), { [status]: 0 });
  });

  it("the Grafana dashboard's queries name only metrics the app exposes", async () => {
    // The checkout's docker/ folder, wherever the compiled test runs from (dist/ or .build/…).
    let root = dirname(fileURLToPath(import.meta.url));
    while (!existsSync(join(root, 'docker', 'grafana-dashboard.json'))) {
      assert.notEqual(dirname(root), root, 'docker/grafana-dashboard.json is above the test');
      root = dirname(root);
    }
    const dashboard = JSON.parse(readFileSync(join(root, 'docker', 'grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const exposed = new Set([...(await scrape()).matchAll(/^# TYPE (\w+) (\w+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!])));
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        for (const [name] of expr.matchAll(/\bsvc_\w+/g)) assert.ok(exposed.has(name), `${panel.title}: ${name} is exposed`);
      }
    }
    const all = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)).join('\n');
    for (const name of ['svc_tasks_last_hour', 'svc_tasks_last_hour_capped', 'svc_money_captured_micros_total']) assert.match(all, new RegExp(`\\b${name}\\b`), `a panel reads ${name}`);
  });
});
