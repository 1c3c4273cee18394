import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from './support/factories.js';
import { bootTestApp, type TestApp } from './support/test-app.js';

describe('GET /api/svc/v1/wallet', () => {
  let t: TestApp;
  before(async () => {
    t = await bootTestApp({ label: 'wallet' });
  });
  after(async () => {
    await t.close();
  });

  it("shows the key's workspace balance", async () => {
    const account = await createAccount(t, { creditUsd: 25 });
    const response = await t.request('/api/svc/v1/wallet', { key: account.key });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { balanceUsd: 25, heldUsd: 0, availableUsd: 25 });
  });

  it('answers 401 in the wallet envelope without a key', async () => {
    const response = await t.request('/api/svc/v1/wallet');
    assert.equal(response.status, 401);
    const body = (await response.json()) as { error: { code: string } };
    assert.equal(body.error.code, 'wallet.unauthorized');
  });
});
