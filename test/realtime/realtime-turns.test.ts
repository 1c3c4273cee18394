import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { microsToUsd } from '../../libs/common/index.js';
import { holdLedger, pollTask, speechListCost, taskRow, terminal, waitForTaskStatus } from '../audio/support/speech-stream-helpers.js';
import { createAccount, type TestAccount } from '../support/factories.js';
import { fundedAppForSuite } from '../support/suite-app.js';
import type { TestApp } from '../support/test-app.js';
import { connectReady, type Frame, newTicket, openSession, type RealtimeClient, SESSIONS, sessionBody } from './realtime-helpers.js';

const deltasOf = (frames: Frame[]): Frame[] => frames.filter((f) => f.type === 'audio.delta');
const pcmOf = (frames: Frame[]): Buffer => Buffer.concat(deltasOf(frames).map((f) => Buffer.from(f.audio as string, 'base64')));

describe('realtime turns', () => {
  let t: TestApp;
  let account: TestAccount;
  fundedAppForSuite({ creditUsd: 25, environment: 'test' }, (booted) => ({ t, account } = booted));

  const fresh = (creditUsd = 5) => createAccount(t, { creditUsd, environment: 'test' });
  const closeSession = (key: string, id: string) => t.request(`${SESSIONS}/${encodeURIComponent(id)}`, { method: 'DELETE', key });

  async function live(owner: TestAccount, body = sessionBody()): Promise<{ client: RealtimeClient; sessionId: string; url: string }> {
    const session = await openSession(t, owner, body);
    const { client } = await connectReady(session.url, session.token);
    return { client, sessionId: session.sessionId, url: session.url };
  }

  it('a turn: accepted with its task and estimate, PCM deltas, then completed with the usage of the task, charged once', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    const text = 'Hello from a realtime turn.';
    client.send({ type: 'turn.commit', turnId: 'turn-1', text });
    const accepted = await client.next('turn.accepted');
    assert.match(accepted.taskId, /^audio:/);
    assert.equal(accepted.turnId, 'turn-1');
    assert.equal(accepted.estimatedUsd, microsToUsd(speechListCost('voice_v4', text.length)));
    const frames = await client.until(['turn.completed', 'turn.status']);
    const last = frames.at(-1)!;
    assert.equal(last.type, 'turn.completed', JSON.stringify(last));
    assert.ok(deltasOf(frames).length >= 2, 'audio comes in several deltas');
    assert.ok(deltasOf(frames).every((f) => f.turnId === 'turn-1' && f.taskId === accepted.taskId));
    assert.equal(frames.length, deltasOf(frames).length + 1, 'only deltas before the terminal frame');
    const pcm = pcmOf(frames);
    assert.equal(pcm.length % 2, 0, '16-bit samples');
    assert.ok(pcm.length > 24_000, 'at least half a second at 24 kHz');
    assert.ok(pcm.readInt16LE(2000) !== 0 || pcm.readInt16LE(4000) !== 0, 'not silence');
    // The task is an ordinary audio task: same usage, same audio, one hold captured once.
    const task = await pollTask(t, owner, accepted.taskId);
    assert.equal(task.status, 'succeeded');
    assert.deepEqual(last, { type: 'turn.completed', turnId: 'turn-1', taskId: accepted.taskId, status: 'succeeded', usage: task.usage });
    assert.equal(task.usage.chargedUsd, accepted.estimatedUsd);
    // Neither replayed nor archived: the task keeps its usage, not the audio.
    assert.deepEqual(task.outputs.audios, []);
    const [stored] = await t.db.query<{ media_key: string | null; output_seconds: number }>(`SELECT media_key, output_seconds FROM audio_task WHERE id = $1`, [accepted.taskId]);
    assert.equal(stored!.media_key, null);
    assert.equal(Number(stored!.output_seconds), pcm.length / 48_000);
    const ledger = await holdLedger(t, accepted.taskId);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.entries.capture, 1);
    assert.equal((await taskRow(t, accepted.taskId)).status, 'succeeded');
    const [row] = await t.db.query<{ endpoint: string; model: string; request: { outputFormat: string } }>(`SELECT endpoint, model, request FROM audio_task WHERE id = $1`, [accepted.taskId]);
    assert.deepEqual([row!.endpoint, row!.model, row!.request.outputFormat], ['realtime', 'voice_v4', 'pcm_24000']);
    // Operators see it as an audio task.
    const admin = await t.request(`/admin/v1/tasks?kind=audio&workspaceId=${owner.workspaceId}`, { admin: true });
    const listed = (await admin.json()) as { items: Array<{ id: string; kind: string }> };
    assert.ok(listed.items.some((item) => item.id === accepted.taskId && item.kind === 'audio'), JSON.stringify(listed));
    // The budget shows the allocation.
    const read = (await (await t.request(`${SESSIONS}/${encodeURIComponent(sessionId)}`, { key: owner.key })).json()) as { budget: { allocatedUsd: number } };
    assert.equal(read.budget.allocatedUsd, accepted.estimatedUsd);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('one turn in flight: a second commit gets realtime.turn_in_flight and the connection stays', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    client.send({ type: 'turn.commit', turnId: 'slow', text: 'A slow one [sandbox:delay=1500]' });
    await client.next('turn.accepted');
    client.send({ type: 'turn.commit', turnId: 'eager', text: 'Too early' });
    const refusal = await client.next('error');
    assert.deepEqual([refusal.code, refusal.turnId], ['realtime.turn_in_flight', 'eager']);
    const end = (await client.until(['turn.completed', 'turn.status'])).at(-1)!;
    assert.equal(end.type, 'turn.completed');
    assert.equal(end.turnId, 'slow');
    // Nothing was made for the refused turn; it can be committed now.
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM realtime_turn WHERE session_id = $1`, [sessionId]);
    assert.equal(n, 1);
    client.send({ type: 'turn.commit', turnId: 'eager', text: 'Now' });
    assert.equal((await client.next('turn.accepted')).turnId, 'eager');
    await client.until(['turn.completed']);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('turnId rules: empty, 81 characters and characters outside A-Za-z0-9_- are refused; 80 is accepted', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    for (const turnId of ['', 'x'.repeat(81), 'a b', 'é', 'a.b', 'a/b', 7, null]) {
      client.send({ type: 'turn.commit', turnId, text: 'Hi' });
      const refusal = await client.next('error');
      assert.equal(refusal.code, 'realtime.invalid_turn_id', JSON.stringify(turnId));
    }
    const longest = 'A-z_9'.repeat(16);
    assert.equal(longest.length, 80);
    client.send({ type: 'turn.commit', turnId: longest, text: 'Hi' });
    assert.equal((await client.next('turn.accepted')).turnId, longest);
    assert.equal((await client.until(['turn.completed', 'turn.status'])).at(-1)!.type, 'turn.completed');
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('malformed, unknown, delta/append and binary frames get an error frame; the connection stays', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    const cases: Array<[unknown, string]> = [
      ['not json', 'realtime.invalid_frame'],
      ['[1,2]', 'realtime.invalid_frame'],
      [{ turnId: 'x' }, 'realtime.invalid_frame'],
      [{ type: 'response.create' }, 'realtime.unknown_frame_type'],
      [{ type: 'input_text.delta', delta: 'Hel' }, 'realtime.input_mode_unsupported'],
      [{ type: 'turn.append', turnId: 'a', text: 'Hel' }, 'realtime.input_mode_unsupported'],
      [{ type: 'turn.commit', turnId: 'a', text: 5 }, 'realtime.invalid_frame'],
      [{ type: 'turn.commit', turnId: 'a', text: 'x', voice: 'other' }, 'realtime.unknown_field'],
      [{ type: 'session.authenticate', token: 'again' }, 'realtime.already_authenticated'],
      [{ type: 'turn.commit', turnId: 'empty', text: '' }, 'audio.invalid_field'],
      [{ type: 'turn.commit', turnId: 'long', text: 'x'.repeat(2001) }, 'audio.text_too_long'],
    ];
    for (const [frame, code] of cases) {
      client.send(frame);
      const error = await client.next('error');
      assert.equal(error.code, code, JSON.stringify(frame).slice(0, 80));
      // A refusal of the turn's text names the frame's field, not the speech request's `prompt`.
      if (code.startsWith('audio.')) assert.match(error.message, /^text: /, error.message);
    }
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    assert.equal((await client.next('error')).code, 'realtime.binary_frame_unsupported');
    // Refusals made nothing and allocated nothing.
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audio_task WHERE workspace_id = $1`, [owner.workspaceId]);
    assert.equal(n, 0);
    client.send({ type: 'turn.commit', turnId: 'ok', text: 'Still here' });
    assert.equal((await client.until(['turn.completed', 'turn.status'])).at(-1)!.type, 'turn.completed');
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('the budget: turns are accepted while their estimate fits; then realtime.budget_exhausted; the wallet is charged for the accepted ones only', async () => {
    const owner = await fresh();
    const text = 'Twenty characters!!';
    const estimate = speechListCost('voice_v4', text.length);
    // Room for two turns and a half.
    const { client, sessionId } = await live(owner, sessionBody({ maxCostUsd: microsToUsd(estimate * 2n + estimate / 2n) }));
    const walletBefore = (await (await t.request('/api/svc/v1/wallet', { key: owner.key })).json()) as { balanceUsd: number };
    const tasks: string[] = [];
    for (const turnId of ['b1', 'b2']) {
      client.send({ type: 'turn.commit', turnId, text });
      tasks.push((await client.next('turn.accepted')).taskId as string);
      assert.equal((await client.until(['turn.completed', 'turn.status'])).at(-1)!.type, 'turn.completed');
    }
    client.send({ type: 'turn.commit', turnId: 'b3', text });
    const refusal = await client.next('error');
    assert.deepEqual([refusal.code, refusal.turnId], ['realtime.budget_exhausted', 'b3']);
    // A shorter turn that fits what is left is still accepted: the rule is "the estimate fits".
    client.send({ type: 'turn.commit', turnId: 'b4', text: 'Hi' });
    tasks.push((await client.next('turn.accepted')).taskId as string);
    await client.until(['turn.completed']);
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM hold WHERE workspace_id = $1`, [owner.workspaceId]);
    assert.equal(n, 3, 'holds only for the accepted turns');
    const charged = (await Promise.all(tasks.map((id) => holdLedger(t, id)))).reduce((sum, l) => sum + l.capture, 0n);
    assert.equal(charged, estimate * 2n + speechListCost('voice_v4', 2));
    const walletAfter = (await (await t.request('/api/svc/v1/wallet', { key: owner.key })).json()) as { balanceUsd: number };
    assert.equal(Math.round((walletBefore.balanceUsd - walletAfter.balanceUsd) * 1e6), Number(charged));
    const read = (await (await t.request(`${SESSIONS}/${encodeURIComponent(sessionId)}`, { key: owner.key })).json()) as { budget: { allocatedUsd: number; remainingUsd: number } };
    assert.equal(read.budget.allocatedUsd, microsToUsd(charged));
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('a wallet that cannot cover a turn: error audio.insufficient_balance, nothing allocated or created', async () => {
    const owner = await fresh(0.001);
    const { client, sessionId } = await live(owner);
    client.send({ type: 'turn.commit', turnId: 'poor', text: 'x'.repeat(100) });
    const refusal = await client.next('error');
    assert.deepEqual([refusal.code, refusal.turnId], ['audio.insufficient_balance', 'poor']);
    const [session] = await t.db.query<{ allocated_micros: string }>(`SELECT allocated_micros FROM realtime_session WHERE id = $1`, [sessionId]);
    assert.equal(session!.allocated_micros, '0');
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM realtime_turn WHERE session_id = $1`, [sessionId]);
    assert.equal(n, 0);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('a repeated turnId with the same text: the same task, no audio, charged once; with another text: realtime.turn_conflict', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    client.send({ type: 'turn.commit', turnId: 'again', text: 'Say it once' });
    const first = await client.next('turn.accepted');
    const firstEnd = (await client.until(['turn.completed'])).at(-1)!;
    client.send({ type: 'turn.commit', turnId: 'again', text: 'Say it once' });
    const repeat = await client.next('turn.accepted');
    assert.deepEqual(repeat, first);
    assert.deepEqual(await client.next(), firstEnd, 'the terminal frame again, no audio before it');
    client.send({ type: 'turn.commit', turnId: 'again', text: 'Something else' });
    assert.deepEqual([(await client.next('error')).code], ['realtime.turn_conflict']);
    const ledger = await holdLedger(t, first.taskId as string);
    assert.equal(ledger.entries.capture, 1);
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audio_task WHERE workspace_id = $1`, [owner.workspaceId]);
    assert.equal(n, 1);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('a disconnect mid-turn, a reconnect with a new ticket, the same turn again: the same task, no new audio, charged once', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    const text = 'Interrupted turn [sandbox:delay=1500]';
    client.send({ type: 'turn.commit', turnId: 'lost', text });
    const accepted = await client.next('turn.accepted');
    client.ws.terminate();
    const ticket = await newTicket(t, owner, session.sessionId);
    const again = await connectReady(session.url, ticket.token);
    again.client.send({ type: 'turn.commit', turnId: 'lost', text });
    assert.deepEqual(await again.client.next('turn.accepted'), accepted);
    const end = await again.client.next();
    assert.equal(end.type, 'turn.completed', JSON.stringify(end));
    const task = await pollTask(t, owner, accepted.taskId as string);
    assert.deepEqual(end.usage, task.usage);
    const ledger = await holdLedger(t, accepted.taskId as string);
    assert.equal(ledger.holds, 1);
    assert.equal(ledger.entries.capture, 1);
    await again.client.close();
    await closeSession(owner.key, session.sessionId);
  });

  it('one turn in flight per session, across connections: a new turn after a reconnect waits for the one still going', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    const text = 'Still going [sandbox:delay=2000]';
    client.send({ type: 'turn.commit', turnId: 'first', text });
    const accepted = await client.next('turn.accepted');
    client.ws.terminate();
    const again = await connectReady(session.url, (await newTicket(t, owner, session.sessionId)).token);
    again.client.send({ type: 'turn.commit', turnId: 'second', text: 'Beside it' });
    const refusal = await again.client.next('error');
    assert.deepEqual([refusal.code, refusal.turnId], ['realtime.turn_in_flight', 'second']);
    assert.match(refusal.message, /turn first of this session is still in flight/);
    // Nothing was made for it: one turn, one hold.
    const turns = await t.db.query<{ turn_id: string }>(`SELECT turn_id FROM realtime_turn WHERE session_id = $1`, [session.sessionId]);
    assert.deepEqual(turns.map((row) => row.turn_id), ['first']);
    // Following the first turn (its repeat) and then the second, once the first has ended.
    again.client.send({ type: 'turn.commit', turnId: 'first', text });
    assert.deepEqual(await again.client.next('turn.accepted'), accepted);
    assert.equal((await again.client.next()).type, 'turn.completed');
    again.client.send({ type: 'turn.commit', turnId: 'second', text: 'Beside it' });
    assert.equal((await again.client.next('turn.accepted')).turnId, 'second');
    assert.equal((await again.client.until(['turn.completed', 'turn.status'])).at(-1)!.type, 'turn.completed');
    await again.client.close();
    await closeSession(owner.key, session.sessionId);
  });

  it('a turn the upstream fails: turn.status failed, nothing charged', async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    client.send({ type: 'turn.commit', turnId: 'bad', text: 'No [sandbox:fail]' });
    const accepted = await client.next('turn.accepted');
    const end = await client.next();
    assert.deepEqual(end, { type: 'turn.status', turnId: 'bad', taskId: accepted.taskId, status: 'failed', phase: null });
    const ledger = await holdLedger(t, accepted.taskId as string);
    assert.equal(ledger.entries.capture ?? 0, 0);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it("a turn whose upstream answer is lost: turn.status processing/reconciliationRequired; the worker resolves it and a repeat answers turn.completed, charged once", async () => {
    const owner = await fresh();
    const { client, sessionId } = await live(owner);
    const text = 'Lost answer [sandbox:uncertain]';
    client.send({ type: 'turn.commit', turnId: 'unsure', text });
    const accepted = await client.next('turn.accepted');
    assert.deepEqual(await client.next(), { type: 'turn.status', turnId: 'unsure', taskId: accepted.taskId, status: 'processing', phase: 'reconciliationRequired' });
    const row = await waitForTaskStatus(t, accepted.taskId as string, terminal, 'the reconciled turn ending');
    assert.equal(row.status, 'succeeded');
    client.send({ type: 'turn.commit', turnId: 'unsure', text });
    assert.deepEqual(await client.next('turn.accepted'), accepted);
    const end = await client.next('turn.completed');
    assert.deepEqual(end.usage, (await pollTask(t, owner, accepted.taskId as string)).usage);
    assert.equal((await holdLedger(t, accepted.taskId as string)).entries.capture, 1);
    await client.close();
    await closeSession(owner.key, sessionId);
  });

  it('DELETE mid-turn closes the socket (4410); the accepted turn still finishes and is charged', async () => {
    const owner = await fresh();
    const session = await openSession(t, owner);
    const { client } = await connectReady(session.url, session.token);
    client.send({ type: 'turn.commit', turnId: 'cut', text: 'Being cut off [sandbox:delay=1000]' });
    const accepted = await client.next('turn.accepted');
    assert.equal((await t.request(`${SESSIONS}/${encodeURIComponent(session.sessionId)}`, { method: 'DELETE', key: owner.key })).status, 200);
    assert.equal((await client.closed).code, 4410);
    const row = await waitForTaskStatus(t, accepted.taskId as string, terminal, 'the cut turn ending');
    assert.equal(row.status, 'succeeded');
    assert.equal((await holdLedger(t, accepted.taskId as string)).entries.capture, 1);
    void account;
  });
});
