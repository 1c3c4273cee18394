import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/factories.js';
import { PRODUCTION_ENV } from '../support/production-env.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createAlt, rowCount, waitForAltTerminal, wallet } from './support/alternate-helpers.js';

/** Production without Kling credentials: a live key gets 503 before any hold; a test key keeps the sandbox. */
describe('alternate video in production without KLING_ACCESS_KEY', () => {
  let t: TestApp;
  let live: TestAccount;
  let test: TestAccount;

  before(async () => {
    t = await bootTestApp({
      label: 'altprod',
      // An https base nobody answers: the sandbox's self-callback is lost and polling ends the task.
      env: { ...PRODUCTION_ENV },
    });
    live = await createAccount(t, { creditUsd: 10 });
    test = await createAccount(t, { creditUsd: 10, environment: 'test' });
  });
  after(() => t.close());

  it('answers 503 provider.unavailable to a live key: no hold, no task', async () => {
    const before = await wallet(t, live);
    const answer = await createAlt(t, live, { prompt: 'x' });
    assert.equal(answer.status, 503);
    assert.equal(answer.body.error_code, 'provider.unavailable');
    assert.deepEqual(answer.body.error_params, { provider: 'kling', status: 503, upstreamCode: 0 });
    assert.deepEqual(await wallet(t, live), before);
    assert.equal(await rowCount(t, live.keyId), 0);
  });

  it('serves a test key from the sandbox', async () => {
    const created = await createAlt(t, test, { prompt: 'sandboxed [sandbox:delay=100]' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await waitForAltTerminal(t, test, created.body.id)).status, 'succeeded');
  });
});
