import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { Clock, DomainError } from '../../../libs/common/index.js';
import type { Metrics } from '../../observability/metrics.service.js';
import { ApiKeyGuard } from './api-key.guard.js';
import type { IdentityRepository } from './identity.repository.js';
import type { KeyInvalidations } from './key-invalidations.js';

/** A context of the given transport whose handler carries no route-access mark. */
function contextOf(type: 'http' | 'ws' | 'rpc', headers: Record<string, string> = {}): ExecutionContext {
  const handler = () => undefined;
  class SomeController {}
  return {
    getType: () => type,
    getHandler: () => handler,
    getClass: () => SomeController,
    switchToHttp: () => ({ getRequest: () => ({ headers }) }),
  } as unknown as ExecutionContext;
}

describe('ApiKeyGuard transports', () => {
  // No key reaches a lookup in these cases: the collaborators behind it are never called.
  const unused = new Proxy({}, { get: () => assert.fail('no key lookup expected') });
  const guard = new ApiKeyGuard(new Reflector(), unused as IdentityRepository, unused as Metrics, new Clock(), unused as DataSource, unused as KeyInvalidations);

  it('lets a WebSocket context through untouched (the realtime gateway authenticates with tickets)', async () => {
    assert.equal(await guard.canActivate(contextOf('ws')), true);
  });

  it('lets other non-HTTP contexts through', async () => {
    assert.equal(await guard.canActivate(contextOf('rpc')), true);
  });

  it('still refuses an HTTP request without a key (401)', async () => {
    await assert.rejects(guard.canActivate(contextOf('http')), (error: unknown) => error instanceof DomainError && error.status === 401);
  });
});
