import { getDataSourceToken } from '@nestjs/typeorm';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DataSource } from 'typeorm';
import { SecretBox, SecretBoxError, secretKeyId } from '../../libs/common/index.js';
import { entityManagerOf, inTransaction } from '../../src/database/transaction.js';
import { WebhookEndpointsService } from '../../src/modules/webhooks/index.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { createEndpoint, endpointPath, endpointRows, FAILED, SUCCEEDED } from './endpoints-helpers.js';

/** Every way the secret could sit in a column: as given, its 32 bytes in the usual encodings, the whole string encoded. */
function encodingsOf(secret: string): string[] {
  const raw = Buffer.from(secret.slice('whsec_'.length), 'base64url');
  assert.equal(raw.length, 32);
  const whole = Buffer.from(secret, 'utf8');
  return [
    secret,
    secret.slice('whsec_'.length),
    raw.toString('base64'),
    raw.toString('base64').replace(/=+$/, ''),
    raw.toString('hex'),
    raw.toString('hex').toUpperCase(),
    whole.toString('base64'),
    whole.toString('base64url'),
    whole.toString('hex'),
  ];
}

/** Every row of every table of the database, as PostgreSQL prints it (what a dump would hold). */
async function databaseText(t: TestApp): Promise<string> {
  const tables = await t.db.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
  assert.ok(tables.some((row) => row.tablename === 'webhook_endpoint'));
  const parts: string[] = [];
  for (const { tablename } of tables) {
    const rows = await t.db.query<{ row: string }>(`SELECT t::text AS row FROM "${tablename}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

const dataSource = (t: TestApp): DataSource => t.app.get<DataSource>(getDataSourceToken());

describe('webhook endpoint secrets', () => {
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    t = await bootTestApp({ label: 'wh-secrets' });
    account = await createAccount(t);
  });
  after(async () => {
    await t.close();
  });

  it('no secret, shown or rotated, is in the database in any encoding', async () => {
    const first = await createEndpoint(t, account);
    const second = await createEndpoint(t, account, { url: 'https://example.org/h', events: [FAILED] });
    const rotation = await t.request(endpointPath(second.id, '/rotate-secret'), { method: 'POST', key: account.key });
    const rotated = ((await rotation.json()) as { secret: string }).secret;
    const dump = await databaseText(t);
    assert.ok(dump.includes(first.id) && dump.includes(second.id), 'the dump holds the endpoints');
    for (const secret of [first.secret, second.secret, rotated]) {
      for (const encoded of encodingsOf(secret)) assert.ok(!dump.includes(encoded), `found ${encoded} in the database`);
    }
    // The sealed form names the current key and opens only with it, for its own row.
    const rows = await endpointRows(t, account.keyId);
    const box = SecretBox.fromBase64Keys(t.config.env.SECRETS_ENCRYPTION_KEY);
    const byId = new Map(rows.map((r) => [r.id, r.secret_sealed]));
    assert.equal(SecretBox.keyIdOf(byId.get(first.id)!), box.currentKeyId);
    assert.equal(box.open(byId.get(first.id)!, first.id), first.secret);
    assert.equal(box.open(byId.get(second.id)!, second.id), rotated);
    assert.throws(() => box.open(byId.get(first.id)!, second.id), SecretBoxError);
  });

  it('findForDelivery gives the endpoint with its secret in clear; after a rotation, the new secret only', async () => {
    const endpoints = t.app.get(WebhookEndpointsService);
    const created = await createEndpoint(t, account, { url: 'https://example.net/deliver', events: [SUCCEEDED, FAILED] });
    assert.deepEqual(await endpoints.findForDelivery(created.id), {
      id: created.id,
      apiKeyId: account.keyId,
      url: 'https://example.net/deliver',
      events: [SUCCEEDED, FAILED],
      enabled: true,
      secret: created.secret,
    });
    const answer = await t.request(endpointPath(created.id, '/rotate-secret'), { method: 'POST', key: account.key });
    const { secret } = (await answer.json()) as { secret: string };
    const after = await endpoints.findForDelivery(created.id);
    assert.equal(after?.secret, secret);
    assert.notEqual(after?.secret, created.secret);
    await t.request(endpointPath(created.id), { method: 'DELETE', key: account.key });
    assert.equal((await endpoints.findForDelivery(created.id))?.enabled, false);
    assert.equal(await endpoints.findForDelivery('webhook:00000000-0000-4000-8000-000000000000'), null);
    assert.equal(await endpoints.findForDelivery('not-an-id'), null);
  });

  it('findForEvent reads inside the caller\'s transaction (it sees an uncommitted change of that transaction)', async () => {
    const endpoints = t.app.get(WebhookEndpointsService);
    const created = await createEndpoint(t, account, { url: 'https://example.net/events', events: [FAILED] });
    const seen = await inTransaction(dataSource(t), async (tx) => {
      const before = await endpoints.findForEvent(created.id, tx);
      await entityManagerOf(tx).query('UPDATE webhook_endpoint SET enabled = false WHERE id = $1', [created.id]);
      const during = await endpoints.findForEvent(created.id, tx);
      const missing = await endpoints.findForEvent('webhook:00000000-0000-4000-8000-000000000000', tx);
      return { before, during, missing };
    });
    assert.deepEqual(seen.before, { id: created.id, apiKeyId: account.keyId, events: [FAILED], enabled: true });
    assert.deepEqual(seen.during, { id: created.id, apiKeyId: account.keyId, events: [FAILED], enabled: false });
    assert.equal(seen.missing, null);
  });
});

describe('webhook secrets across an encryption-key rotation', () => {
  const keyOld = randomBytes(32).toString('base64');
  const keyNew = randomBytes(32).toString('base64');
  let db: TestDatabase;

  before(async () => {
    db = await createTestDatabase('wh-keyrot');
  });
  after(async () => {
    await db.drop();
  });

  it('rows sealed under the previous key still open; new seals use the new key; without the old key they do not open', async () => {
    const first = await bootTestApp({ db, env: { SECRETS_ENCRYPTION_KEY: keyOld } });
    let account: TestAccount;
    let kept: { id: string; secret: string };
    let toRotate: { id: string; secret: string };
    try {
      account = await createAccount(first);
      kept = await createEndpoint(first, account);
      toRotate = await createEndpoint(first, account);
    } finally {
      await first.close();
    }

    const rotatedApp = await bootTestApp({ db, env: { SECRETS_ENCRYPTION_KEY: keyNew, SECRETS_ENCRYPTION_KEYS_PREVIOUS: keyOld } });
    let rotatedSecret: string;
    try {
      const endpoints = rotatedApp.app.get(WebhookEndpointsService);
      assert.equal((await endpoints.findForDelivery(kept.id))?.secret, kept.secret);
      const answer = await rotatedApp.request(endpointPath(toRotate.id, '/rotate-secret'), { method: 'POST', key: account.key });
      assert.equal(answer.status, 200);
      rotatedSecret = ((await answer.json()) as { secret: string }).secret;
      assert.equal((await endpoints.findForDelivery(toRotate.id))?.secret, rotatedSecret);
      const keyIds = new Map((await endpointRows(rotatedApp, account.keyId)).map((r) => [r.id, SecretBox.keyIdOf(r.secret_sealed)]));
      assert.equal(keyIds.get(kept.id), secretKeyId(Buffer.from(keyOld, 'base64')));
      assert.equal(keyIds.get(toRotate.id), secretKeyId(Buffer.from(keyNew, 'base64')));
    } finally {
      await rotatedApp.close();
    }

    const withoutOld = await bootTestApp({ db, env: { SECRETS_ENCRYPTION_KEY: keyNew } });
    try {
      const endpoints = withoutOld.app.get(WebhookEndpointsService);
      assert.equal((await endpoints.findForDelivery(toRotate.id))?.secret, rotatedSecret);
      await assert.rejects(endpoints.findForDelivery(kept.id), SecretBoxError);
    } finally {
      await withoutOld.close();
    }
  });
});
