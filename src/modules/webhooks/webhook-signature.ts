import { createHmac } from 'node:crypto';

/**
 * The `x-svc-signature` value of one attempt (DESIGN §4a): `t=<seconds>,v1=<hex>`, where hex is the
 * lowercase HMAC-SHA256 keyed with the whole secret string (`whsec_…` as text, not decoded) over
 * `<seconds>.<raw body>`. That is Stripe's construction, so `stripe.webhooks.constructEvent`
 * verifies it as it is.
 */
export function signWebhook(secret: string, body: string, at: Date): string {
  const seconds = Math.floor(at.getTime() / 1000);
  // Fed in two parts: the same bytes as `${seconds}.${body}`, without copying the body into a new string.
  const digest = createHmac('sha256', secret).update(`${seconds}.`, 'utf8').update(body, 'utf8').digest('hex');
  return `t=${seconds},v1=${digest}`;
}
