import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdLedger, pollTask, waitForTaskStatus, terminal } from '../audio/support/speech-stream-helpers.js';
import { eventually } from '../support/eventually.js';
import { createAccount } from '../support/factories.js';
import { metricSample } from '../support/prometheus.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';
import { connectReady, openSession, RealtimeClient, sessionBody } from './realtime-helpers.js';

const metrics = async (t: TestApp): Promise<string> => (await t.request('/metrics')).text();

describe('realtime operations: back-pressure, connection cap, metrics, shutdown', () => {
  it('a client that stops reading is closed with 4413 once the send buffer is full; its turn still finishes and is charged', async () => {
    const t = await bootTestApp({ label: 'rtslow', env: { REALTIME_MAX_BUFFERED_BYTES: '65536' } });
    try {
      const owner = await createAccount(t, { creditUsd: 5, environment: 'test' });
      const session = await openSession(t, owner, sessionBody({ model: 'voice_v4_turbo' }));
      const { client } = await connectReady(session.url, session.token);
      // Stop reading: the kernel buffers fill, then the server's own queue.
      const socket = (client.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      client.send({ type: 'turn.commit', turnId: 'flood', text: 'Far too much audio for a client that never reads. '.repeat(39) });
      await eventually(async () => metricSample(await metrics(t), 'svc_realtime_closes_total', '{code="4413"}'), (n) => n === 1, 'the slow client closed with 4413');
      const taskId = (await t.db.query<{ task_id: string }>(`SELECT task_id FROM realtime_turn WHERE session_id = $1`, [session.sessionId]))[0]!.task_id;
      const row = await waitForTaskStatus(t, taskId, terminal, 'the flooded turn ending');
      assert.equal(row.status, 'succeeded');
      assert.equal((await holdLedger(t, taskId)).entries.capture, 1);
      assert.equal((await pollTask(t, owner, taskId)).usage.inputCharacters, 1950);
      socket.resume();
      const { code } = await client.closed;
      assert.ok([4413, 1006].includes(code), `closed with ${code}`);
      // The connection is gone from the gauge.
      const text = await metrics(t);
      assert.equal(metricSample(text, 'svc_realtime_connections', '{state="ready"}'), 0);
    } finally {
      await t.close();
    }
  });

  it('the connection cap: one connection more is closed with 1013; a freed slot is usable again', async () => {
    const t = await bootTestApp({ label: 'rtcap', env: { REALTIME_MAX_CONNECTIONS: '2' } });
    try {
      const owner = await createAccount(t, { creditUsd: 5, environment: 'test' });
      const session = await openSession(t, owner);
      const first = RealtimeClient.connect(session.url);
      const second = RealtimeClient.connect(session.url);
      await Promise.all([first.opened, second.opened]);
      const third = RealtimeClient.connect(session.url);
      await third.opened;
      assert.deepEqual(await third.closed, { code: 1013, reason: 'this server holds its maximum of realtime connections; try again later' });
      second.ws.close();
      await second.closed;
      await eventually(async () => metricSample(await metrics(t), 'svc_realtime_connections', '{state="authenticating"}'), (n) => n === 1, 'the gauge at one');
      const { client } = await connectReady(session.url, session.token);
      await client.close();
      first.ws.terminate();
    } finally {
      await t.close();
    }
  });

  it('metrics: open connections, turns by outcome, time to the first audio frame', async () => {
    const t = await bootTestApp({ label: 'rtmetrics' });
    try {
      const owner = await createAccount(t, { creditUsd: 5, environment: 'test' });
      const session = await openSession(t, owner);
      const { client } = await connectReady(session.url, session.token);
      let text = await metrics(t);
      assert.equal(metricSample(text, 'svc_realtime_connections', '{state="ready"}'), 1);
      client.send({ type: 'turn.commit', turnId: 'm1', text: 'Measured' });
      await client.until(['turn.completed']);
      client.send({ type: 'turn.commit', turnId: 'm2', text: 'Fails [sandbox:fail]' });
      await client.until(['turn.status']);
      client.send({ type: 'turn.commit', turnId: 'm1', text: 'Measured' });
      await client.until(['turn.completed']);
      client.send({ type: 'turn.commit', turnId: 'm1', text: 'Other' });
      await client.next('error');
      text = await metrics(t);
      assert.equal(metricSample(text, 'svc_realtime_turns_total', '{outcome="completed"}'), 1);
      assert.equal(metricSample(text, 'svc_realtime_turns_total', '{outcome="failed"}'), 1);
      assert.equal(metricSample(text, 'svc_realtime_turns_total', '{outcome="replayed"}'), 1);
      assert.equal(metricSample(text, 'svc_realtime_turns_total', '{outcome="refused"}'), 1);
      assert.equal(metricSample(text, 'svc_realtime_first_audio_seconds_count'), 1);
      await client.close();
      await eventually(async () => metricSample(await metrics(t), 'svc_realtime_connections', '{state="ready"}'), (n) => n === 0, 'the gauge back at zero');
      assert.equal(metricSample(await metrics(t), 'svc_realtime_closes_total', '{code="1000"}'), 1);
    } finally {
      await t.close();
    }
  });

  it('shutdown: the turn in flight finishes and reaches the client, then the connection is closed with 1012', async () => {
    const db = await createTestDatabase('rtshutdown');
    const t = await bootTestApp({ label: 'rtshutdown', db });
    try {
      const owner = await createAccount(t, { creditUsd: 5, environment: 'test' });
      const session = await openSession(t, owner);
      const { client } = await connectReady(session.url, session.token);
      client.send({ type: 'turn.commit', turnId: 'last', text: 'The last words [sandbox:delay=3000]' });
      const accepted = await client.next('turn.accepted');
      const closing = t.app.close();
      // While it drains: a newcomer is turned away with 1012, a new turn with realtime.shutting_down.
      await eventually(
        async () => {
          const newcomer = RealtimeClient.connect(session.url);
          await newcomer.opened.catch(() => undefined);
          newcomer.authenticate('rt_' + 'B'.repeat(43));
          return (await newcomer.closed).code;
        },
        (code) => code === 1012,
        'a newcomer refused with 1012 while draining',
        5000,
      );
      client.send({ type: 'turn.commit', turnId: 'next', text: 'One more' });
      assert.equal((await client.closed).code, 1012);
      await closing;
      const types = client.frames.map((f) => f.type);
      assert.ok(types.includes('audio.delta'));
      assert.ok(types.indexOf('turn.completed') > types.lastIndexOf('audio.delta'), JSON.stringify(types));
      assert.deepEqual(
        client.frames.filter((f) => f.type === 'error').map((f) => [f.code, f.turnId]),
        [['realtime.shutting_down', 'next']],
      );
      const [row] = await db.query<{ status: string }>(`SELECT status FROM audio_task WHERE id = $1`, [accepted.taskId]);
      assert.equal(row!.status, 'succeeded');
    } finally {
      await t.close().catch(() => undefined);
      await db.drop();
    }
  });
});

