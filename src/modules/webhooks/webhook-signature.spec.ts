import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Stripe from 'stripe';
import { signWebhook } from './webhook-signature.js';

describe('signWebhook', () => {
  it('matches the reference vector (docs/upstreams.md §4.2)', () => {
    const header = signWebhook('whsec_test_secret', '{"id":"evt_1","type":"test"}', new Date(1_700_000_000_500));
    assert.equal(header, 't=1700000000,v1=a0bb9bdb8d6051a3cc87d1afaa1ea57ac43f0768ad34d66326df4de0ec5b7426');
  });

  it("is accepted by Stripe's verifier, and refused with another secret or body", () => {
    const body = JSON.stringify({ id: 'event:1', type: 'audio.generation.succeeded' });
    const header = signWebhook('whsec_abc', body, new Date());
    const stripe = new Stripe('sk_test_unused');
    assert.equal((stripe.webhooks.constructEvent(body, header, 'whsec_abc') as { id: string }).id, 'event:1');
    assert.throws(() => stripe.webhooks.constructEvent(body, header, 'whsec_other'));
    assert.throws(() => stripe.webhooks.constructEvent(`${body} `, header, 'whsec_abc'));
  });
});
