import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueryFailedError } from 'typeorm';
import { isConnectionError, retryOnConnectionError } from './connection-errors.js';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isConnectionError', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['57P01 admin_shutdown (a killed backend)', pgError('57P01', 'terminating connection due to administrator command'), true],
    ['57P02 crash_shutdown', pgError('57P02'), true],
    ['57P03 cannot_connect_now', pgError('57P03'), true],
    ['08006 connection_failure', pgError('08006'), true],
    ['ECONNREFUSED from the socket', pgError('ECONNREFUSED'), true],
    ['ECONNRESET from the socket', pgError('ECONNRESET'), true],
    ["pg's Connection terminated unexpectedly (no code)", new Error('Connection terminated unexpectedly'), true],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect'), true],
    ['wrapped by TypeORM', new QueryFailedError('SELECT 1', [], pgError('57P01')), true],
    ['23505 unique violation', pgError('23505'), false],
    ['40P01 deadlock', pgError('40P01'), false],
    ['57014 query canceled', pgError('57014'), false],
    ['a plain error', new Error('boom'), false],
    ['not an error', 'Connection terminated', false],
    ['null', null, false],
  ];
  for (const [name, error, expected] of cases) {
    it(`${name} → ${expected}`, () => assert.equal(isConnectionError(error), expected));
  }
});

describe('retryOnConnectionError', () => {
  it('tries again after lost connections, telling beforeRetry each time, and returns the first success', async () => {
    const seen: number[] = [];
    let calls = 0;
    const result = await retryOnConnectionError(
      async () => {
        calls++;
        if (calls < 3) throw pgError('57P01');
        return 'done';
      },
      { delaysMs: [0, 0, 0], beforeRetry: (_e, attempt) => void seen.push(attempt) },
    );
    assert.equal(result, 'done');
    assert.equal(calls, 3);
    assert.deepEqual(seen, [1, 2]);
  });

  it('throws any other error at once, and the last connection error once the delays are spent', async () => {
    let calls = 0;
    await assert.rejects(retryOnConnectionError(async () => { calls++; throw pgError('23505'); }, { delaysMs: [0, 0] }), { code: '23505' });
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(retryOnConnectionError(async () => { calls++; throw pgError('ECONNREFUSED'); }, { delaysMs: [0, 0] }), { code: 'ECONNREFUSED' });
    assert.equal(calls, 3);
  });
});
