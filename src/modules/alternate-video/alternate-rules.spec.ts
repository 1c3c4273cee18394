import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { klingToken, parseAlternateTask } from '../../../libs/providers/index.js';
import { StaticPriceCatalogue } from '../billing/price-catalogue.js';
import { alternateEnvelope, upstreamRefusal } from './alternate-errors.js';
import { billableSeconds } from './alternate-task.runner.js';

describe('alternate provider: code table, envelope, task parsing, token, pricing', () => {
  it('maps every upstream code of the spec table to its status, with the code', () => {
    const expected: Array<[number, number]> = [
      [1000, 401], [1001, 401], [1002, 401], [1003, 401], [1004, 401],
      [1100, 429], [1101, 429], [1102, 429], [1103, 403],
      [1200, 400], [1201, 400], [1202, 404], [1203, 404],
      [1300, 400], [1301, 400], [1302, 429], [1303, 429], [1304, 429],
      [5000, 502], [5001, 503], [5002, 504],
    ];
    for (const [code, status] of expected) {
      const error = upstreamRefusal(code, 999);
      assert.equal(error.status, status, `code ${code}`);
      assert.deepEqual(error.body().error_params, { provider: 'kling', status, upstreamCode: code });
      assert.equal(error.body().error_code, 'provider.request_failed');
    }
  });

  it('answers codes outside the table with 502 (keeping the code), no code with 502, unreachable with 503', () => {
    assert.deepEqual(upstreamRefusal(1400, 400).body().error_params, { provider: 'kling', status: 502, upstreamCode: 1400 });
    assert.deepEqual(upstreamRefusal(null, 418).body().error_params, { provider: 'kling', status: 502, upstreamCode: 0 });
    assert.deepEqual(upstreamRefusal(null, 503).body().error_params, { provider: 'kling', status: 503, upstreamCode: 0 });
  });

  it('writes the envelope without upstreamCode when the upstream was not asked', () => {
    assert.deepEqual(alternateEnvelope({ status: 400, code: 'provider.invalid_field', message: 'prompt: is required' }), {
      error_code: 'provider.invalid_field',
      error: 'prompt: is required',
      error_params: { provider: 'kling', status: 400, upstreamCode: 0 },
    });
  });

  it('reads a Kling task object (query data or callback body)', () => {
    const seen = parseAlternateTask({
      task_id: '842250903629086785',
      task_status: 'succeed',
      task_status_msg: '',
      task_info: { external_task_id: 'alt:x' },
      task_result: { videos: [{ id: 'v', url: 'https://cdn.example/v.mp4', duration: '5.1' }] },
    });
    assert.deepEqual(seen, { upstreamTaskId: '842250903629086785', externalTaskId: 'alt:x', status: 'succeed', message: '', videoUrl: 'https://cdn.example/v.mp4', videoSeconds: 5.1 });
    assert.equal(parseAlternateTask({ task_id: '1', task_status: 'done' }), null);
    assert.equal(parseAlternateTask({ task_id: 2 ** 53 + 2, task_status: 'succeed' }), null, 'an inexact numeric id');
    assert.equal(parseAlternateTask({ task_id: 42, task_status: 'submitted' })?.upstreamTaskId, '42');
    assert.equal(parseAlternateTask({ task_status: 'succeed' }), null);
    assert.equal(parseAlternateTask('nope'), null);
    assert.deepEqual(parseAlternateTask({ task_id: '1', task_status: 'processing' }), { upstreamTaskId: '1', externalTaskId: null, status: 'processing' });
  });

  it('builds an HS256 JWT with iss, nbf five seconds back and the given lifetime', () => {
    const token = klingToken('ak', 'sk', 1_700_000_000_000, 300);
    const [head, payload, signature] = token.split('.') as [string, string, string];
    assert.deepEqual(JSON.parse(Buffer.from(head, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
    assert.deepEqual(JSON.parse(Buffer.from(payload, 'base64url').toString()), { iss: 'ak', exp: 1_700_000_300, nbf: 1_699_999_995 });
    assert.equal(signature, createHmac('sha256', 'sk').update(`${head}.${payload}`).digest('base64url'));
  });

  it('signs the way the Standard Webhooks test vector says (the library the callbacks use)', () => {
    const signature = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1614265330 * 1000), '{"test": 2432232314}');
    assert.equal(signature, 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('bills the measured duration to 0.1 s, at most the requested duration, per started second', () => {
    const prices = new StaticPriceCatalogue();
    const context = { workspaceId: 'w', apiKeyId: 'k', environment: 'live' as const };
    assert.equal(billableSeconds(5.022, 5), 5);
    assert.equal(billableSeconds(10.4, 10), 10);
    assert.equal(billableSeconds(4.3, 5), 4.3);
    assert.equal(prices.alternateVideoCost(context, 'kling-v2-6', 'std', billableSeconds(5.022, 5)), 350_000n);
    assert.equal(prices.alternateVideoCost(context, 'kling-v2-6', 'pro', billableSeconds(4.3, 5)), 700_000n);
    assert.equal(prices.alternateVideoCost(context, 'kling-v2-5-turbo', 'std', 10), 420_000n);
  });
});
