import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proxyToTestRedis, type TcpProxy } from '../support/tcp-proxy.js';
import { bootTestApp, type TestApp } from '../support/test-app.js';

/** Far above the 2 s the views wait for Redis, far below a hang. */
const ANSWER_WITHIN_MS = 8000;

/**
 * Redis away (every connection reset, new ones refused): the views an operator reaches for in an
 * outage answer in bounded time. Readiness is DESIGN's 503 with terminus's report naming Redis
 * (it was the error filter's 500); the admin overview (the console's sign-in) and the metrics
 * scrape answer without the queue counts (they hung until Redis came back).
 */
describe('Redis away: readiness, the admin overview and the metrics scrape still answer', () => {
  let t: TestApp;
  let proxy: TcpProxy;

  before(async () => {
    const redis = await proxyToTestRedis();
    proxy = redis.proxy;
    t = await bootTestApp({ label: 'redisoutage', env: { REDIS_URL: redis.url } });
  });
  after(async () => {
    await proxy.restore();
    await t.close();
    await proxy.cut();
  });

  const timed = async (path: string, init: Parameters<TestApp['request']>[1] = {}): Promise<Response> => {
    try {
      return await t.request(path, { ...init, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
    } catch (error) {
      throw new Error(`${path}: no answer within ${ANSWER_WITHIN_MS} ms`, { cause: error });
    }
  };

  it('answers 200 with every dependency up', async () => {
    const ready = await timed('/health/ready');
    assert.equal(ready.status, 200);
    const overview = (await (await timed('/admin/v1/overview', { admin: true })).json()) as { queues: Array<{ waiting: number | null }> };
    assert.ok(overview.queues.length > 0 && overview.queues.every((queue) => typeof queue.waiting === 'number'));
  });

  it('with Redis cut: /health/ready is 503 naming Redis down, the overview has null counts, /metrics answers', async () => {
    await proxy.cut();
    try {
      const ready = await timed('/health/ready');
      assert.equal(ready.status, 503);
      const report = (await ready.json()) as { status: string; error?: Record<string, { status: string }>; details: Record<string, { status: string }> };
      assert.equal(report.status, 'error');
      assert.equal(report.details.redis?.status, 'down');
      assert.equal(report.details.postgres?.status, 'up');

      const overview = await timed('/admin/v1/overview', { admin: true });
      assert.equal(overview.status, 200);
      const body = (await overview.json()) as { openHolds: number; queues: Array<Record<string, unknown>> };
      assert.equal(typeof body.openHolds, 'number', 'the database figures are there');
      assert.ok(body.queues.length > 0);
      for (const queue of body.queues) assert.deepEqual([queue.waiting, queue.active, queue.delayed, queue.prioritized, queue.failed], [null, null, null, null, null]);

      const metrics = await timed('/metrics');
      assert.equal(metrics.status, 200);
      const text = await metrics.text();
      assert.match(text, /svc_http_requests_total/);
      assert.doesNotMatch(text, /svc_queue_jobs\{/, 'no queue samples while Redis is away');
    } finally {
      await proxy.restore();
    }
    // Back: ready again once Redis reconnects.
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      status = (await timed('/health/ready')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(status, 200);
  });
});
