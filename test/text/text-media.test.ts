import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { FakeGeminiServer } from '../fakes/gemini-text-server.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { textListCost } from '../support/list-prices.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { openaiFor, textHolds, walletRow } from './text-helpers.js';

function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A 16-second MP4 as far as its movie header goes (all the fake upstream and the hold read). */
const CLIP = (() => {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12);
  mvhd.writeUInt32BE(16_000, 16);
  return Buffer.concat([box('ftyp', Buffer.from('isom\0\0\x02\0isomavc1', 'latin1')), box('mdat', Buffer.alloc(50_000, 1)), box('moov', box('mvhd', mvhd))]);
})();

/** A real PNG (1×1), as a client would link it. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');

/**
 * Media links in text requests, end to end over HTTPS: a media server with a certificate the
 * service trusts through OUTBOUND_EXTRA_CA_FILE (plain http refused, as in production), the
 * guarded client fetching and inlining, and the fake Gemini upstream receiving the bytes.
 */
describe('text media links over HTTPS (guarded client, fake Gemini upstream)', () => {
  let dir: string;
  let media: Server;
  let mediaBase: string;
  let fake: FakeGeminiServer;
  let t: TestApp;
  let account: TestAccount;
  let client: OpenAI;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-text-tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
        '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    media = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (request, response) => {
      if (request.url === '/cat.png') response.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length }).end(PNG);
      else if (request.url === '/clip.mp4') response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': CLIP.length }).end(CLIP);
      else response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    mediaBase = `https://localhost:${(media.address() as AddressInfo).port}`;
    fake = await new FakeGeminiServer().start();
    t = await bootTestApp({
      label: 'text-media',
      env: {
        GEMINI_API_KEY: 'fake-gemini-key',
        GEMINI_BASE_URL: fake.url,
        OUTBOUND_ALLOW_HTTP: 'false',
        OUTBOUND_EXTRA_CA_FILE: join(dir, 'cert.pem'),
        TEXT_BODY_LIMIT_BYTES: String(3 * 1024 * 1024),
      },
    });
    account = await createAccount(t, { creditUsd: 10 });
    client = openaiFor(t, account.key);
  });
  after(async () => {
    await t.close();
    await fake.stop();
    media.closeAllConnections();
    await new Promise<void>((resolve) => media.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches an HTTPS image link and sends its bytes inline; the upstream never sees the URL', async () => {
    const completion = await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `${mediaBase}/cat.png` } }, { type: 'text', text: 'what is this?' }] }],
    });
    assert.equal(completion.object, 'chat.completion');
    const sent = fake.requests.at(-1)!.body as { contents: Array<{ parts: Array<Record<string, any>> }> };
    const parts = sent.contents.at(-1)!.parts;
    assert.deepEqual(parts[0], { inlineData: { mimeType: 'image/png', data: PNG.toString('base64') } });
    assert.ok(!JSON.stringify(sent).includes(mediaBase), 'no user URL reaches the upstream');
    assert.equal((await textHolds(t, account.workspaceId)).at(-1)!.status, 'settled');
  });

  it('the Responses operation takes an input_image link the same way', async () => {
    const response = await client.responses.create({
      model: 'vendor-3.7-flash',
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: `${mediaBase}/cat.png`, detail: 'auto' }, { type: 'input_text', text: 'describe' }] }],
    });
    assert.equal(response.status, 'completed');
    const sent = fake.requests.at(-1)!.body as { contents: Array<{ parts: Array<Record<string, any>> }> };
    assert.equal(sent.contents.at(-1)!.parts[0]!.inlineData.data, PNG.toString('base64'));
  });

  it('a video at 24 fps is held for its frames, so the upstream\'s whole count is charged (none of it left uncollected)', async () => {
    // What Gemini counts for 16 s at 24 fps: 258 tokens a frame and 32 a second of sound.
    const promptTokenCount = 16 * 24 * 258 + 16 * 32 + 3;
    fake.next({ kind: 'answer', parts: [{ text: 'a cat' }], usage: { promptTokenCount, candidatesTokenCount: 5, thoughtsTokenCount: 10, totalTokenCount: promptTokenCount + 15 } });
    const response = await client.responses.create({
      model: 'vendor-3.7-flash',
      max_output_tokens: 100,
      input: [{ role: 'user', content: [{ type: 'input_video', video_url: `${mediaBase}/clip.mp4`, fps: 24 } as any, { type: 'input_text', text: 'describe' }] }],
    });
    assert.equal(response.usage!.input_tokens, promptTokenCount);
    const hold = (await textHolds(t, account.workspaceId)).at(-1)!;
    assert.equal(hold.status, 'settled');
    assert.equal(BigInt(hold.captured_micros), textListCost('vendor-3.7-flash', promptTokenCount, 15), 'charged the measured usage, not the hold');
    assert.ok(BigInt(hold.amount_micros) > BigInt(hold.captured_micros));
  });

  it('a link that cannot be fetched, or a plain http link, is refused before any hold', async () => {
    const before = await walletRow(t, account.workspaceId);
    const holdsBefore = (await textHolds(t, account.workspaceId)).length;
    const requestsBefore = fake.requests.length;
    for (const [url, status, code] of [
      [`${mediaBase}/missing.png`, 422, 'text.media_fetch_failed'],
      [`http://localhost:${new URL(mediaBase).port}/cat.png`, 400, 'text.invalid_field'],
    ] as const) {
      const error = await client.chat.completions
        .create({ model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] })
        .then(
          () => assert.fail(`${url} was accepted`),
          (e: unknown) => e,
        );
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, status, url);
      assert.equal((error.error as { code?: string } | undefined)?.code ?? (error as any).code, code, url);
    }
    assert.deepEqual(await walletRow(t, account.workspaceId), before);
    assert.equal((await textHolds(t, account.workspaceId)).length, holdsBefore);
    assert.equal(fake.requests.length, requestsBefore, 'nothing was sent upstream');
  });

  it('the text operations take inline media above the general body limit, up to their own limit', async () => {
    // 2 MiB of inline image: over BODY_LIMIT_BYTES (1 MiB), under TEXT_BODY_LIMIT_BYTES (3 MiB here).
    const big = `data:image/png;base64,${Buffer.alloc(1536 * 1024, 7).toString('base64')}`;
    const completion = await client.chat.completions.create({
      model: 'vendor-3.8-flash',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: big } }, { type: 'text', text: 'big' }] }],
    });
    assert.equal(completion.object, 'chat.completion');
    const sent = fake.requests.at(-1)!.body as { contents: Array<{ parts: Array<Record<string, any>> }> };
    assert.equal(sent.contents.at(-1)!.parts[0]!.inlineData.data.length, big.length - 'data:image/png;base64,'.length);

    const tooBig = `data:image/png;base64,${Buffer.alloc(3 * 1024 * 1024, 7).toString('base64')}`;
    const refused = await t.request('/api/svc/v1/chat/completions', {
      method: 'POST',
      key: account.key,
      json: { model: 'vendor-3.8-flash', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: tooBig } }] }] },
    });
    assert.equal(refused.status, 413);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'request.body_too_large');

    // Other routes keep the general limit.
    const video = await t.request('/v1/contents/generations/tasks', { method: 'POST', key: account.key, json: { model: 'vendor-omni-flash-preview', prompt: 'x'.repeat(2 * 1024 * 1024) } });
    assert.equal(video.status, 413);
  });
});
