import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ModulesContainer } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { ConfigModule } from '../../src/config/config.module.js';
import { inTransaction } from '../../src/database/transaction.js';
import { AdminModule } from '../../src/modules/admin/admin.module.js';
import { BillingModule } from '../../src/modules/billing/billing.module.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { IdentityModule } from '../../src/modules/identity/identity.module.js';
import { IdentityService } from '../../src/modules/identity/identity.service.js';
import { MediaModule } from '../../src/modules/media/media.module.js';
import { ProvidersModule } from '../../src/modules/providers/providers.module.js';
import { TextModule } from '../../src/modules/text/text.module.js';
import { VideoModule } from '../../src/modules/video/video.module.js';
import { MetricsModule } from '../../src/observability/metrics.module.js';
import { QueueModule } from '../../src/queue/queue.module.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { walletRow } from '../text/text-helpers.js';

/** The seams other modules use instead of billing's and identity's internals (docs/architecture.md › Module boundaries). */
describe('module seams: transaction handle, abandoned holds, plain results, explicit imports', () => {
  let t: TestApp;
  let wallet: WalletService;
  let account: TestAccount;
  const holdOf = (subjectType: string, subjectId: string, amountMicros = 1_000_000n) => ({
    workspaceId: account.workspaceId,
    environment: 'live' as const,
    apiKeyId: account.keyId,
    amountMicros,
    subjectType,
    subjectId,
  });
  const holdRows = (subjectId: string) => t.db.query<{ status: string }>('SELECT status FROM hold WHERE subject_id = $1', [subjectId]);
  const ledgerRows = (subjectId: string) => t.db.query<{ kind: string }>('SELECT kind FROM ledger_entry WHERE subject_id = $1 ORDER BY id', [subjectId]);

  before(async () => {
    t = await bootTestApp({ label: 'seams' });
    wallet = t.app.get(WalletService);
  });
  after(async () => {
    await t.close();
  });

  it("a hold made with a domain's transaction handle commits with that transaction, and is undone with it", async () => {
    account = await createAccount(t, { creditUsd: 10 });
    const db = t.app.get(DataSource);

    await assert.rejects(
      inTransaction(db, async (tx) => {
        await wallet.hold(holdOf('seam_task', 'seam:rolled-back'), tx);
        throw new Error('the domain row failed to insert');
      }),
      /the domain row failed/,
    );
    assert.deepEqual(await holdRows('seam:rolled-back'), []);
    assert.deepEqual(await ledgerRows('seam:rolled-back'), []);
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 10_000_000n, held: 0n });

    const holdId = await inTransaction(db, async (tx) => {
      const id = await wallet.hold(holdOf('seam_task', 'seam:committed'), tx);
      // Not visible outside before the commit: the hold is inside the caller's transaction.
      assert.deepEqual(await holdRows('seam:committed'), []);
      return id;
    });
    assert.deepEqual(await holdRows('seam:committed'), [{ status: 'open' }]);
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 10_000_000n, held: 1_000_000n });
    await wallet.release(holdId);
  });

  it('a hold the transaction cannot cover refuses with 402 and leaves nothing', async () => {
    account = await createAccount(t, { creditUsd: 1 });
    await assert.rejects(
      inTransaction(t.app.get(DataSource), (tx) => wallet.hold(holdOf('seam_task', 'seam:too-big', 2_000_000n), tx)),
      (error: { status?: number; code?: string }) => error.status === 402 && error.code === 'insufficient_balance',
    );
    assert.deepEqual(await holdRows('seam:too-big'), []);
  });

  it('releaseAbandoned frees the open holds of one subject type older than the cutoff, charges nothing, and repeats as a no-op', async () => {
    account = await createAccount(t, { creditUsd: 10 });
    const old = await wallet.hold(holdOf('audio_task', 'audio:dead-process'));
    const recent = await wallet.hold(holdOf('audio_task', 'audio:still-running'));
    const otherKind = await wallet.hold(holdOf('image', 'image:dead-process'));
    const settled = await wallet.hold(holdOf('audio_task', 'audio:settled'));
    await wallet.settle(settled, 400_000n);
    await t.db.query(`UPDATE hold SET created_at = now() - interval '3 hours' WHERE id = ANY($1::uuid[])`, [[old, otherKind, settled]]);
    const cutoff = new Date(Date.now() - 3600_000);

    assert.equal(await wallet.releaseAbandoned('audio_task', cutoff), 1);
    const statuses = await t.db.query<{ id: string; status: string }>('SELECT id, status FROM hold WHERE id = ANY($1::uuid[])', [[old, recent, otherKind, settled]]);
    assert.deepEqual(Object.fromEntries(statuses.map((row) => [row.id, row.status])), {
      [old]: 'released',
      [recent]: 'open',
      [otherKind]: 'open',
      [settled]: 'settled',
    });
    assert.deepEqual(await ledgerRows('audio:dead-process'), [{ kind: 'hold' }, { kind: 'release' }]);
    assert.deepEqual(await walletRow(t, account.workspaceId), { balance: 9_600_000n, held: 2_000_000n });
    assert.equal(await wallet.releaseAbandoned('audio_task', cutoff), 0);
    await wallet.release(recent);
    await wallet.release(otherKind);
  });

  it('identity and the ledger answer plain objects: no entity, no key hash crosses the module', async () => {
    const identity = t.app.get(IdentityService);
    const workspace = await identity.createWorkspace('plain results');
    const { apiKey } = await identity.issueApiKey(workspace.id, 'plain key');
    const keys = await identity.listApiKeys(workspace.id, 10);
    const revoked = await identity.revokeApiKey(apiKey.id);
    for (const value of [workspace, await identity.getWorkspace(workspace.id), apiKey, keys[0], revoked, await identity.getApiKey(apiKey.id)]) {
      assert.equal(Object.getPrototypeOf(value), Object.prototype);
      assert.equal('secretSha256' in value!, false);
    }
    assert.deepEqual(Object.keys(apiKey).sort(), ['createdAt', 'environment', 'id', 'lastUsedAt', 'name', 'prefix', 'revokedAt', 'status', 'workspaceId']);
    assert.equal(revoked.status, 'revoked');
    assert.ok((await identity.countWorkspaces()) >= 1);
    assert.ok((await identity.listWorkspaces(100)).some((w) => w.id === workspace.id && Object.getPrototypeOf(w) === Object.prototype));

    await wallet.credit(workspace.id, 'live', 3_000_000n, 'plain-ledger');
    const [entry, ...rest] = await wallet.listLedger(workspace.id, 10);
    assert.equal(rest.length, 0);
    assert.equal(Object.getPrototypeOf(entry), Object.prototype);
    assert.deepEqual({ ...entry!, id: typeof entry!.id, createdAt: entry!.createdAt instanceof Date }, {
      id: 'bigint',
      workspaceId: workspace.id,
      environment: 'live',
      kind: 'credit',
      amountMicros: 3_000_000n,
      holdId: null,
      subjectType: null,
      subjectId: null,
      reference: 'plain-ledger',
      createdAt: true,
    });
  });

  it('only platform modules are global (config, metrics, queue, and media, configured once at the root); domain modules are imported where used', () => {
    const global = new Map([...t.app.get(ModulesContainer).values()].map((module) => [module.metatype, module.isGlobal]));
    for (const platform of [ConfigModule, MetricsModule, QueueModule, MediaModule]) assert.equal(global.get(platform), true, platform.name);
    for (const domain of [AdminModule, ProvidersModule, IdentityModule, BillingModule, VideoModule, TextModule]) {
      assert.equal(global.get(domain), false, domain.name);
    }
  });
});
