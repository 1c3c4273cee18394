import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { WalletService } from '../../src/modules/billing/wallet.service.js';
import { ImageGenerationEntity } from '../../src/modules/images/image-generation.entity.js';
import { ImageGenerationRepository } from '../../src/modules/images/image-generation.repository.js';
import { ImageRetention } from '../../src/modules/images/image-retention.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { generationRow, GENERATIONS, holdLedger, imageListCost, walletState } from './support/images-helpers.js';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Public links end 24 hours after generation (an injectable clock moves time), and the
 * retention sweep then deletes the image and marks the row; a generation a dead process left
 * running is failed and its hold released.
 */
describe('image retention (manual clock)', () => {
  let clock: ManualClock;
  let t: TestApp;
  let account: TestAccount;

  before(async () => {
    clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
    t = await bootTestApp({ label: 'images-retention', clock });
    account = await createAccount(t, { creditUsd: 5, environment: 'test' });
  });
  after(async () => {
    await t.close();
  });

  it('serves the link for 24 hours, then 404; the sweep deletes the file and marks the row', async () => {
    const response = await t.request(GENERATIONS, { method: 'POST', key: account.key, json: { model: 'vendor-3.1-flash-image', prompt: 'a snow globe', controls: { size: '512' } } });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as { id: string; outputs: { images: string[]; expiresAt: string } };
    assert.equal(answer.outputs.expiresAt, new Date(clock.now().getTime() + DAY_MS).toISOString());
    const link = answer.outputs.images[0]!;
    const row = await generationRow(t, answer.id);
    const file = join(t.mediaDir, ...(row!.media_key as string).split('/'));
    assert.ok(existsSync(file), 'the image is stored');

    clock.advance(DAY_MS - 1000);
    const late = await fetch(link);
    assert.equal(late.status, 200, 'still served a second before the end');
    assert.equal(late.headers.get('content-type'), 'image/png');
    assert.equal(await t.app.get(ImageRetention).sweepExpiredMedia(), 0, 'nothing to sweep yet');

    clock.advance(2000);
    const expired = await fetch(link);
    assert.equal(expired.status, 404);
    assert.equal(((await expired.json()) as { error: { code: string } }).error.code, 'media.not_found');

    assert.equal(await t.app.get(ImageRetention).sweepExpiredMedia(), 1);
    assert.ok(!existsSync(file), 'the file is deleted');
    const swept = await generationRow(t, answer.id);
    assert.equal((swept!.media_deleted_at as Date).toISOString(), clock.now().toISOString());
    assert.equal(swept!.status, 'succeeded', 'the generation itself stays as it was');
    const [media] = (await t.db.query(`SELECT deleted_at FROM media_object WHERE key = $1`, [row!.media_key])) as Array<{ deleted_at: Date | null }>;
    assert.ok(media!.deleted_at, 'the media row is marked deleted');
    assert.equal(await t.app.get(ImageRetention).sweepExpiredMedia(), 0, 'a second sweep finds nothing');
    assert.equal((await fetch(link)).status, 404);
  });

  it('fails a generation a dead process left running, and releases its hold (nothing charged)', async () => {
    // What a process that died between the hold and the answer leaves behind: a running row and an open hold.
    const id = `image:${randomUUID()}`;
    const price = imageListCost('vendor-3-pro-image', '2K');
    const rows = t.app.get(ImageGenerationRepository);
    await rows.transaction(async (tx) => {
      const holdId = await t.app.get(WalletService).hold(
        { workspaceId: account.workspaceId, apiKeyId: account.keyId, environment: 'test', amountMicros: price, subjectType: 'image_generation', subjectId: id },
        tx,
      );
      await rows.insert(tx, Object.assign(new ImageGenerationEntity(), {
        id, apiKeyId: account.keyId, workspaceId: account.workspaceId, environment: 'test', model: 'vendor-3-pro-image', adapter: 'sandbox',
        request: { prompt: 'lost', size: '2K', aspectRatio: '1:1', references: [] }, status: 'running', holdId, mediaKey: null, contentType: null,
        chargedMicros: null, failureReason: null, completedAt: null, expiresAt: null, mediaDeletedAt: null, createdAt: clock.now(), updatedAt: clock.now(),
      } satisfies ImageGenerationEntity));
    });
    const before = await walletState(t, account.workspaceId);
    assert.equal(before.held, price);

    const retention = t.app.get(ImageRetention);
    clock.advance(10 * 60_000);
    assert.equal(await retention.failAbandoned(), 0, 'a request may still be working after ten minutes');
    clock.advance(25 * 60_000);
    assert.equal(await retention.failAbandoned(), 1);
    assert.equal((await generationRow(t, id))!.status, 'failed');
    assert.equal((await holdLedger(t, id)).status, 'released');
    const afterwards = await walletState(t, account.workspaceId);
    assert.deepEqual([afterwards.balance, afterwards.held], [before.balance, 0n]);
    assert.equal(await retention.failAbandoned(), 0, 'ending it twice changes nothing');
  });
});
