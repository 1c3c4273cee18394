/**
 * Attack: map the service's internal name resolution through its error messages. A text request
 * links media on a host name that resolves to a loopback address (`localhost`), with private
 * addresses refused as in production (OUTBOUND_ALLOW_PRIVATE=false). The 422
 * `text.media_fetch_failed` used to say e.g. "localhost: 127.0.0.1 is in the loopback range",
 * telling the client what the name resolved to; probing names one by one would map the network.
 *
 * What must hold: the client learns that the address is not allowed, not which address or range
 * the name resolved to (the log keeps that); nothing is held or charged. Sent with the official
 * `openai` SDK on both text operations.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import type { TestAccount } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from '../text/text-helpers.js';
import { fundedAppForSuite } from '../support/suite-app.js';

/** What a refusal message must not contain: the address, its family or range, resolver output. */
const RESOLUTION_DETAIL = /127\.0\.0\.1|::1|loopback|range|getaddrinfo|ENOTFOUND/i;

describe('reliability: media fetch errors do not reveal what a host name resolved to', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  fundedAppForSuite({ label: 'media-error-leaks-address', env: { OUTBOUND_ALLOW_PRIVATE: 'false' }, creditUsd: 5 }, (booted) => {
    ({ t, account } = booted);
    client = openaiFor(t, account.key);
  });

  async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
    const error = await request.then(
      () => assert.fail('the media link was accepted'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    return error;
  }

  it('a name resolving to loopback: 422 text.media_fetch_failed saying the address is not allowed, and naming none', async () => {
    const before = await walletRow(t, account.workspaceId);
    const url = 'https://localhost/cat.png';
    const errors = [
      await refusal(client.chat.completions.create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] })),
      await refusal(client.responses.create({ model: 'vendor-3.8-flash', input: [{ role: 'user', content: [{ type: 'input_image', image_url: url, detail: 'auto' }] }] })),
    ];
    for (const error of errors) {
      assert.equal(error.status, 422);
      assert.equal(error.code, 'text.media_fetch_failed');
      const message = (error.error as { message?: string }).message ?? '';
      assert.match(message, /address of localhost is not allowed/);
      assert.doesNotMatch(message, RESOLUTION_DETAIL, message);
    }
    assert.deepEqual(await walletRow(t, account.workspaceId), before);
    assert.deepEqual(await textHolds(t, account.workspaceId), []);
  });
});
