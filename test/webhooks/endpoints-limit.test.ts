import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { assertError, createEndpoint, createEndpointRaw, endpointPath, endpointRows, listEndpoints, SUCCEEDED } from './endpoints-helpers.js';

const LIMIT = 3;
const BODY = { url: 'https://example.com/hooks', events: [SUCCEEDED] };

describe('webhook endpoints: per-key limit (WEBHOOK_MAX_ENDPOINTS_PER_KEY)', () => {
  let t: TestApp;

  before(async () => {
    t = await bootTestApp({ label: 'wh-limit', env: { WEBHOOK_MAX_ENDPOINTS_PER_KEY: String(LIMIT) } });
  });
  after(async () => {
    await t.close();
  });

  it('one past the limit answers 409 webhook.endpoint_limit and stores nothing; disabled endpoints count', async () => {
    const account = await createAccount(t);
    const ids: string[] = [];
    for (let i = 0; i < LIMIT; i += 1) ids.push((await createEndpoint(t, account, BODY)).id);
    assert.equal((await t.request(endpointPath(ids[0]!), { method: 'DELETE', key: account.key })).status, 200);
    await assertError(await createEndpointRaw(t, account, BODY), 409, 'webhook.endpoint_limit');
    assert.equal((await endpointRows(t, account.keyId)).length, LIMIT);
    // A disabled endpoint is reused instead: PATCH it back on with a new URL.
    const answer = await t.request(endpointPath(ids[0]!), { method: 'PATCH', key: account.key, json: { url: 'https://example.org/new', enabled: true } });
    assert.equal(answer.status, 200);
    assert.equal((await listEndpoints(t, account)).filter((e) => e.enabled).length, LIMIT);
  });

  it('the limit is per key: another key still creates', async () => {
    const full = await createAccount(t);
    for (let i = 0; i < LIMIT; i += 1) await createEndpoint(t, full, BODY);
    const other = await createAccount(t);
    await createEndpoint(t, other, BODY);
    assert.equal((await endpointRows(t, other.keyId)).length, 1);
  });

  it('concurrent creations of one key never pass the limit', async () => {
    const account = await createAccount(t);
    const answers = await Promise.all(Array.from({ length: 12 }, () => createEndpointRaw(t, account, BODY)));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [...Array<number>(LIMIT).fill(201), ...Array<number>(12 - LIMIT).fill(409)]);
    for (const answer of answers.filter((a) => a.status === 409)) await assertError(answer, 409, 'webhook.endpoint_limit');
    assert.equal((await endpointRows(t, account.keyId)).length, LIMIT);
  });
});
