import { Logger } from '@nestjs/common';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it, mock } from 'node:test';
import { logErrorsQuietly } from './redis-error-log.js';

describe('logErrorsQuietly', () => {
  it('reports the first error of a minute and counts the rest into the next report', () => {
    mock.timers.enable({ apis: ['Date'], now: 0 });
    try {
      const logger = new Logger('test');
      const warn = mock.method(logger, 'warn', () => undefined);
      const connection = new EventEmitter();
      logErrorsQuietly(connection, 'queue video', logger);

      connection.emit('error', new Error('connect ECONNREFUSED'));
      for (let i = 0; i < 30; i++) {
        mock.timers.tick(1000);
        connection.emit('error', new Error('connect ECONNREFUSED'));
      }
      assert.deepEqual(warn.mock.calls.map((c) => c.arguments[0]), ['queue video: connect ECONNREFUSED']);

      mock.timers.tick(30_000);
      connection.emit('error', new Error('read ECONNRESET'));
      assert.deepEqual(warn.mock.calls.map((c) => c.arguments[0]), [
        'queue video: connect ECONNREFUSED',
        'queue video: read ECONNRESET (and 30 more errors since the last report)',
      ]);
    } finally {
      mock.timers.reset();
    }
  });

  it('keeps an error event from throwing: an emitter without a listener would', () => {
    const logger = new Logger('test');
    const warn = mock.method(logger, 'warn', () => undefined);
    const connection = new EventEmitter();
    logErrorsQuietly(connection, 'worker', logger);
    assert.doesNotThrow(() => connection.emit('error', new Error('boom')));
    assert.equal(warn.mock.callCount(), 1);
  });
});
