import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../libs/common/index.js';
import { footprint } from '../audio/audio-helpers.js';
import { anyModelVoice } from '../audio/support/speech-stream-helpers.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { createSession, newTicket, openSession, SESSIONS, sessionBody } from './realtime-helpers.js';

const clock = new ManualClock(new Date('2026-11-24T12:00:00.000Z'));

describe('realtime sessions (REST)', () => {
  let t: TestApp;
  let account: TestAccount;
  fundedAppForSuite({ creditUsd: 25, environment: 'test', clock }, (booted) => ({ t, account } = booted));

  const fresh = () => createAccount(t, { creditUsd: 5, environment: 'test' });
  const del = (key: string, id: string) => t.request(`${SESSIONS}/${encodeURIComponent(id)}`, { method: 'DELETE', key });

  it('creates a session: id, ws:// url from PUBLIC_BASE_URL, one-use token valid 60 s, session 50 min, completeTurn, default budget 1 USD', async () => {
    const owner = await fresh();
    const now = clock.now().getTime();
    const session = await openSession(t, owner);
    assert.match(session.sessionId, /^session:[0-9a-f-]{36}$/);
    assert.equal(session.url, `${t.baseUrl.replace('http://', 'ws://')}/v1/audio/realtime?sessionId=${encodeURIComponent(session.sessionId)}`);
    assert.match(session.token, /^rt_[A-Za-z0-9_-]{43}$/);
    assert.equal(new Date(session.tokenExpiresAt).getTime(), now + 60_000);
    assert.equal(new Date(session.expiresAt).getTime(), now + 50 * 60_000);
    assert.equal(session.inputMode, 'completeTurn');
    assert.deepEqual(session.budget, { maxCostUsd: 1, allocatedUsd: 0, remainingUsd: 1 });
    assert.equal(session.status, 'active');
    assert.equal(session.connected, false);
    assert.equal(session.controls.outputFormat, 'pcm_24000');
    // Only the ticket's hash is stored.
    const rows = await t.db.query<{ token_hash: Buffer }>(`SELECT token_hash FROM realtime_ticket WHERE session_id = $1`, [session.sessionId]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.token_hash.length, 32);
    assert.ok(!rows[0]!.token_hash.toString('latin1').includes(session.token));
    await del(owner.key, session.sessionId);
  });

  it('a key with an active session gets 409 audio.session_active; after DELETE it may open another', async () => {
    const owner = await fresh();
    const first = await openSession(t, owner);
    const second = await createSession(t, owner);
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, 'audio.session_active');
    const closed = await del(owner.key, first.sessionId);
    assert.equal(closed.status, 200);
    assert.equal(((await closed.json()) as { status: string }).status, 'closed');
    const third = await openSession(t, owner);
    await del(owner.key, third.sessionId);
  });

  const refusals: Array<[string, unknown, string, string]> = [
    ['maxCostUsd 0', sessionBody({ maxCostUsd: 0 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd 10.01', sessionBody({ maxCostUsd: 10.01 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd 11', sessionBody({ maxCostUsd: 11 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd a string', sessionBody({ maxCostUsd: '1' }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd negative', sessionBody({ maxCostUsd: -1 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd below one micro-USD', sessionBody({ maxCostUsd: 0.0000001 }), 'audio.invalid_field', 'maxCostUsd'],
    // A cap finer than a micro-USD is refused, not rounded up past what the client set.
    ['maxCostUsd with 7 decimals', sessionBody({ maxCostUsd: 0.0023995 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd 0.0000019', sessionBody({ maxCostUsd: 0.0000019 }), 'audio.invalid_field', 'maxCostUsd'],
    ['maxCostUsd null', sessionBody({ maxCostUsd: null }), 'audio.invalid_field', 'maxCostUsd'],
    ['unknown field', sessionBody({ inputMode: 'completeTurn' }), 'audio.unknown_field', 'inputMode'],
    ['controls.outputFormat (turns speak pcm_24000)', { model: 'voice_v4', controls: { voiceId: anyModelVoice(), outputFormat: 'pcm_24000' } }, 'audio.unknown_field', 'controls.outputFormat'],
    ['voiceId not a string', { model: 'voice_v4', controls: { voiceId: 7 } }, 'audio.invalid_field', 'controls.voiceId'],
    ['unknown model', sessionBody({ model: 'voice_v9' }), 'audio.invalid_field', 'model'],
    ['no controls', { model: 'voice_v4' }, 'audio.invalid_field', 'controls'],
    ['no voice', { model: 'voice_v4', controls: {} }, 'audio.invalid_field', 'controls.voiceId'],
    ['unknown voice', sessionBody({ controls: { voiceId: 'NoSuchVoice000000000' } }), 'audio.voice_unsupported', 'controls.voiceId'],
    ['not an object', [1], 'audio.invalid_field', ''],
  ];
  for (const [name, body, code, field] of refusals) {
    it(`400 ${code} for ${name}; nothing is created`, async () => {
      const owner = await fresh();
      const before = await footprint(t, owner);
      const { status, body: answer } = await createSession(t, owner, body);
      assert.equal(status, 400, JSON.stringify(answer));
      assert.ok(answer.error.code.startsWith(code), answer.error.code);
      assert.ok(answer.error.message.includes(field), answer.error.message);
      assert.deepEqual(await footprint(t, owner), before);
      const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM realtime_session WHERE api_key_id = $1`, [owner.keyId]);
      assert.equal(n, 0);
    });
  }

  it('accepts maxCostUsd 10 and 0.5', async () => {
    for (const maxCostUsd of [10, 0.5]) {
      const owner = await fresh();
      const session = await openSession(t, owner, sessionBody({ maxCostUsd }));
      assert.deepEqual(session.budget, { maxCostUsd, allocatedUsd: 0, remainingUsd: maxCostUsd });
    }
  });

  it('reads a session (status, expiry, budget, connected) and answers a new ticket; a closed session takes no ticket (409)', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const read = await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { key: owner.key });
    assert.equal(read.status, 200);
    const body = (await read.json()) as Record<string, unknown>;
    assert.equal(body.sessionId, session.sessionId);
    assert.equal(body.expiresAt, session.expiresAt);
    assert.equal(body.status, 'active');
    assert.equal(body.connected, false);
    assert.equal(body.token, undefined, 'a read shows no ticket');
    const ticket = await newTicket(t, owner, session.sessionId);
    assert.notEqual(ticket.token, session.token);
    assert.equal(ticket.url, session.url);
    assert.equal(new Date(ticket.tokenExpiresAt).getTime(), clock.now().getTime() + 60_000);
    // The new ticket replaces the earlier one: one ticket row per session.
    const rows = await t.db.query(`SELECT 1 FROM realtime_ticket WHERE session_id = $1`, [session.sessionId]);
    assert.equal(rows.length, 1);
    await del(owner.key, session.sessionId);
    const again = await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}/tickets`, { method: 'POST', key: owner.key });
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, 'audio.session_closed');
    // DELETE is repeatable.
    assert.equal((await del(owner.key, session.sessionId)).status, 200);
  });

  it('a session expires after 50 minutes: status expired, no ticket, and the key may open a new one', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    clock.advance(50 * 60_000);
    const read = (await (await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { key: owner.key })).json()) as { status: string };
    assert.equal(read.status, 'expired');
    const ticket = await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}/tickets`, { method: 'POST', key: owner.key });
    assert.equal(ticket.status, 409);
    const next = await openSession(t, owner);
    await del(owner.key, next.sessionId);
  });

  it("another key's session is not found: read, ticket and delete answer 404 audio.session_not_found and change nothing", async () => {
    const owner = await fresh();
    const stranger = await fresh();
    const session = await openSession(t, owner);
    const path = `${SESSIONS}/${encodeURIComponent(session.sessionId)}`;
    for (const [method, suffix] of [['GET', ''], ['POST', '/tickets'], ['DELETE', '']] as const) {
      const answer = await t.request(`${path}${suffix}`, { method, key: stranger.key });
      assert.equal(answer.status, 404, `${method} ${suffix}`);
      assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'audio.session_not_found');
    }
    for (const id of ['session:not-a-uuid', 'audio:00000000-0000-4000-8000-000000000000', 'session:00000000-0000-4000-8000-000000000000']) {
      const answer = await t.request(`${SESSIONS}/${encodeURIComponent(id)}`, { key: owner.key });
      assert.equal(answer.status, 404);
    }
    const read = (await (await t.request(path, { key: owner.key })).json()) as { status: string };
    assert.equal(read.status, 'active');
    const tickets = await t.db.query<{ token_hash: Buffer }>(`SELECT token_hash FROM realtime_ticket WHERE session_id = $1`, [session.sessionId]);
    assert.equal(tickets.length, 1, 'the stranger made no ticket');
    await del(owner.key, session.sessionId);
  });

  it('without a key: 401 audio.unauthorized', async () => {
    const answer = await t.request(SESSIONS, { method: 'POST', json: sessionBody() });
    assert.equal(answer.status, 401);
    assert.equal(((await answer.json()) as { error: { code: string } }).error.code, 'audio.unauthorized');
    void account;
  });
});
