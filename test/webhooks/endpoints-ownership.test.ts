import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebhookEndpointsService } from '../../src/modules/webhooks/index.js';
import { createAccount, issueKey, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { assertError, createEndpoint, endpointPath, endpointRows, listEndpoints, SUCCEEDED } from './endpoints-helpers.js';

/** Every route that names an endpoint, with a body that would change it if the key owned it. */
const ROUTES: Array<[string, string, string, unknown]> = [
  ['PATCH url', 'PATCH', '', { url: 'https://attacker.example/steal' }],
  ['PATCH enabled', 'PATCH', '', { enabled: false }],
  ['DELETE', 'DELETE', '', undefined],
  ['rotate-secret', 'POST', '/rotate-secret', undefined],
];

describe('webhook endpoints: owner only', () => {
  let t: TestApp;
  let owner: TestAccount;
  let endpointId: string;

  before(async () => {
    t = await bootTestApp({ label: 'wh-owner' });
    owner = await createAccount(t);
    endpointId = (await createEndpoint(t, owner)).id;
  });
  after(async () => {
    await t.close();
  });

  const callers: Array<[string, () => Promise<{ key: string; keyId: string }>]> = [
    ['a key of another workspace', async () => createAccount(t)],
    ['another key of the same workspace', async () => issueKey(t, owner.workspaceId)],
  ];

  for (const [who, makeCaller] of callers) {
    it(`${who}: does not see it in its list`, async () => {
      const caller = await makeCaller();
      assert.deepEqual(await listEndpoints(t, caller), []);
    });

    for (const [name, method, tail, json] of ROUTES) {
      it(`${who}: ${name} answers 404 webhook.not_found and changes nothing`, async () => {
        const caller = await makeCaller();
        const before = await endpointRows(t);
        await assertError(await t.request(endpointPath(endpointId, tail), { method, key: caller.key, json }), 404, 'webhook.not_found');
        assert.deepEqual(await endpointRows(t), before);
      });
    }

    it(`${who}: the service's owner check answers null`, async () => {
      const caller = await makeCaller();
      assert.equal(await t.app.get(WebhookEndpointsService).findOwned(caller.keyId, endpointId), null);
    });
  }

  const unknownIds: Array<[string, string]> = [
    ['an unknown id', 'webhook:00000000-0000-4000-8000-000000000000'],
    ['a malformed id', 'webhook:nope'],
    ['an id of another kind', 'audio:00000000-0000-4000-8000-000000000000'],
  ];
  for (const [what, id] of unknownIds) {
    for (const [name, method, tail, json] of ROUTES) {
      it(`the owner on ${what}: ${name} answers 404 webhook.not_found`, async () => {
        const before = await endpointRows(t);
        await assertError(await t.request(endpointPath(id, tail), { method, key: owner.key, json }), 404, 'webhook.not_found');
        assert.deepEqual(await endpointRows(t), before);
      });
    }
  }

  it('the owner still sees it unchanged, and the owner check finds it', async () => {
    const [listed] = await listEndpoints(t, owner);
    assert.deepEqual({ id: listed!.id, url: listed!.url, events: listed!.events, enabled: listed!.enabled }, { id: endpointId, url: 'https://example.com/hooks', events: [SUCCEEDED], enabled: true });
    assert.deepEqual(await t.app.get(WebhookEndpointsService).findOwned(owner.keyId, endpointId), { id: endpointId, enabled: true });
  });
});
