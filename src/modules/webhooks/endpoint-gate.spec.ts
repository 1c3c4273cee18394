import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppConfig } from '../../config/app-config.js';
import { EndpointGate } from './endpoint-gate.js';

describe('EndpointGate', () => {
  const gate = () => new EndpointGate(AppConfig.from({ WEBHOOK_ENDPOINT_CONCURRENCY: '2' }));

  it('lets WEBHOOK_ENDPOINT_CONCURRENCY attempts per endpoint in, independently per endpoint', () => {
    const g = gate();
    assert.equal(g.tryEnter('a'), true);
    assert.equal(g.tryEnter('a'), true);
    assert.equal(g.tryEnter('a'), false);
    assert.equal(g.tryEnter('b'), true);
    g.leave('a');
    assert.equal(g.tryEnter('a'), true);
  });

  it("defers by the endpoint's typical attempt time, within 200 ms and 3 × 30 s", () => {
    const g = gate();
    const unknown = g.deferralMs('new');
    assert.ok(unknown >= 200 && unknown <= 600, String(unknown));
    for (let i = 0; i < 50; i++) g.recordDuration('slow', 15_000);
    const slow = g.deferralMs('slow');
    assert.ok(slow >= 14_000 && slow <= 45_000, String(slow));
    g.recordDuration('dead', 10_000_000);
    assert.ok(g.deferralMs('dead') <= 90_000);
  });
});
