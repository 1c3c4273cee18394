import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createAudio, speechBody, waitForAudio } from '../audio/audio-helpers.js';
import { walletFigures } from '../audio/voices-helpers.js';
import { assertError, createEndpoint, endpointPath, FAILED, SUCCEEDED } from './endpoints-helpers.js';

const GENERATIONS = '/v1/audio/generations';

async function audioRows(t: TestApp, apiKeyId: string): Promise<Array<{ id: string; webhook_endpoint_id: string | null }>> {
  return t.db.query('SELECT id, webhook_endpoint_id FROM audio_task WHERE api_key_id = $1 ORDER BY created_at', [apiKeyId]);
}

describe('audio creation with webhookEndpointId: the endpoint must be the same key\'s', () => {
  let t: TestApp;
  let owner: TestAccount;
  let endpointId: string;

  before(async () => {
    t = await bootTestApp({ label: 'wh-audio' });
    owner = await createAccount(t, { creditUsd: 10, environment: 'test' });
    endpointId = (await createEndpoint(t, owner, { url: 'http://127.0.0.1:9/hooks', events: [SUCCEEDED, FAILED] })).id;
  });
  after(async () => {
    await t.close();
  });

  it('its own endpoint: 200, the task records the endpoint', async () => {
    const created = await createAudio(t, owner, speechBody({ webhookEndpointId: endpointId }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(await audioRows(t, owner.keyId), [{ id: created.body.id, webhook_endpoint_id: endpointId }]);
    await waitForAudio(t, owner, created.body.id);
  });

  it('its own disabled endpoint is accepted too (whether an event is sent is decided when the task ends)', async () => {
    const account = await createAccount(t, { creditUsd: 10, environment: 'test' });
    const { id } = await createEndpoint(t, account);
    assert.equal((await t.request(endpointPath(id), { method: 'DELETE', key: account.key })).status, 200);
    const created = await createAudio(t, account, speechBody({ webhookEndpointId: id }));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(await audioRows(t, account.keyId), [{ id: created.body.id, webhook_endpoint_id: id }]);
    await waitForAudio(t, account, created.body.id);
  });

  const foreign: Array<[string, () => Promise<{ key: string; keyId: string; workspaceId: string }>, () => string]> = [
    ['another workspace\'s key', async () => createAccount(t, { creditUsd: 10, environment: 'test' }), () => endpointId],
    [
      'another key of the same workspace',
      async () => ({ ...(await issueKey(t, owner.workspaceId, 'test')), workspaceId: owner.workspaceId }),
      () => endpointId,
    ],
    ['an unknown id', async () => createAccount(t, { creditUsd: 10, environment: 'test' }), () => 'webhook:00000000-0000-4000-8000-000000000000'],
    ['a malformed id', async () => createAccount(t, { creditUsd: 10, environment: 'test' }), () => 'webhook:x'],
  ];
  for (const [what, makeCaller, idOf] of foreign) {
    it(`${what}: 404 audio.webhook_endpoint_not_found (spec: a resource not owned is answered as not found), no task, wallet unchanged`, async () => {
      const caller = await makeCaller();
      const account = { ...caller } as TestAccount;
      const walletBefore = await walletFigures(t, account);
      const tasksBefore = await t.db.query('SELECT id FROM audio_task ORDER BY id');
      const answer = await t.request(GENERATIONS, { method: 'POST', key: caller.key, json: speechBody({ webhookEndpointId: idOf() }) });
      const message = await assertError(answer, 404, 'audio.webhook_endpoint_not_found');
      assert.match(message, /webhookEndpointId/);
      assert.deepEqual(await walletFigures(t, account), walletBefore);
      assert.deepEqual(await t.db.query('SELECT id FROM audio_task ORDER BY id'), tasksBefore);
    });
  }
});
