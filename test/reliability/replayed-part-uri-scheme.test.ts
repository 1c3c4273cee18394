/**
 * Attack: smuggle a file reference past the media rules through replayed parts. Assistant
 * messages carry `providerMetadata.vendor.parts`, replayed upstream unchanged; a part
 * `{fileData: {fileUri}}` with `file:///etc/passwd`, `ftp://x`, ` https://x` (leading space) or
 * `gs://b/o` went straight to the upstream, which would read whatever that URI names, while the
 * same URI as a media link was refused.
 *
 * What must hold, on both text operations with the official `openai` SDK: such a URI is refused
 * before any hold (400 `text.invalid_field`; gs:// the usual 422 `text.gcs_uri_unsupported`),
 * nothing is held; an http(s) URL still goes through the guarded client as any media link does
 * (fetched by the service, refused by the guard when it cannot be fetched).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { createAccount, type TestAccount } from '../support/factories.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from '../text/text-helpers.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

type Operation = 'chat' | 'responses';

describe('reliability: replayed parts carry only file URIs the media rules allow', () => {
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;
  let media: Server;
  let mediaBase: string;
  const mediaHits: string[] = [];

  before(async () => {
    media = createServer((request, response) => {
      mediaHits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG);
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaBase = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;
    t = await bootTestApp({ label: 'replayed-part-uri-scheme' });
    account = await createAccount(t, { creditUsd: 5 });
    client = openaiFor(t, account.key);
  });
  after(async () => {
    await t.close();
    media.closeAllConnections();
    await new Promise<void>((resolve) => media.close(() => resolve()));
  });

  /** A second turn replaying an assistant turn whose parts hold a file reference. */
  function replay(operation: Operation, fileUri: string): Promise<unknown> {
    const parts = [{ text: 'look at this' }, { fileData: { mimeType: 'image/png', fileUri } }];
    if (operation === 'chat') {
      const messages = [
        { role: 'user', content: 'show me' },
        { role: 'assistant', content: 'look at this', providerMetadata: { vendor: { parts } } },
        { role: 'user', content: 'and now?' },
      ] as unknown as OpenAI.Chat.Completions.ChatCompletionMessageParam[];
      return client.chat.completions.create({ model: 'vendor-3.8-flash', messages });
    }
    const input = [
      { role: 'user', content: 'show me' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'look at this' }], providerMetadata: { vendor: { parts } } },
      { role: 'user', content: 'and now?' },
    ] as unknown as OpenAI.Responses.ResponseInput;
    return client.responses.create({ model: 'vendor-3.8-flash', input });
  }

  async function refusal(request: Promise<unknown>, label: string): Promise<InstanceType<typeof OpenAI.APIError>> {
    const error = await request.then(
      () => assert.fail(`${label} was accepted`),
      (e: unknown) => e,
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    return error;
  }

  for (const operation of ['chat', 'responses'] as const) {
    it(`${operation}: file:, ftp:, a leading space and gs:// are refused before any hold`, async () => {
      const wallet = await walletRow(t, account.workspaceId);
      const holds = (await textHolds(t, account.workspaceId)).length;
      for (const [uri, status, code] of [
        ['file:///etc/passwd', 400, 'text.invalid_field'],
        ['ftp://x', 400, 'text.invalid_field'],
        [' https://x', 400, 'text.invalid_field'],
        ['gs://b/o', 422, 'text.gcs_uri_unsupported'],
      ] as const) {
        const error = await refusal(replay(operation, uri), `${operation} ${JSON.stringify(uri)}`);
        assert.equal(error.status, status, uri);
        assert.equal(error.code, code, uri);
        if (status === 400) assert.match(error.message, /providerMetadata\.vendor\.parts\.1\.fileData\.fileUri: must be an HTTPS URL or a base64 data URL/);
      }
      assert.deepEqual(await walletRow(t, account.workspaceId), wallet);
      assert.equal((await textHolds(t, account.workspaceId)).length, holds, 'no hold');
    });

    it(`${operation}: an http(s) URL is fetched through the guarded client, as media links are`, async () => {
      const path = `/replayed-${operation}.png`;
      await replay(operation, `${mediaBase}${path}`);
      assert.ok(mediaHits.includes(path), 'the service fetched the replayed URL itself');
      // A URL the guard cannot fetch is refused before any hold, like a media link.
      const holds = (await textHolds(t, account.workspaceId)).length;
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const error = await refusal(replay(operation, `https://127.0.0.1:${port}/gone.png`), 'an unreachable URL');
      assert.equal(error.status, 422);
      assert.equal(error.code, 'text.media_fetch_failed');
      assert.equal((await textHolds(t, account.workspaceId)).length, holds, 'no hold');
    });
  }
});
