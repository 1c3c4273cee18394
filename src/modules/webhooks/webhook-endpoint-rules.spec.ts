import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../libs/common/index.js';
import { checkWebhookEvents, checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH, type UrlPolicy } from './webhook-endpoint-rules.js';

const STRICT: UrlPolicy = { allowHttp: false, allowPrivate: false };
const LOCAL: UrlPolicy = { allowHttp: true, allowPrivate: true };

function refusal(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof DomainError, `a DomainError, got ${String(error)}`);
    assert.equal(error.status, 400);
    return { code: error.code, message: error.message };
  }
  assert.fail('expected a refusal');
}

describe('webhook URL rules', () => {
  const refused: Array<[string, string, UrlPolicy, string]> = [
    ['not a URL', 'hooks', STRICT, 'webhook.invalid_url'],
    ['relative', '/hooks', STRICT, 'webhook.invalid_url'],
    ['user info', 'https://user:pw@example.com/h', STRICT, 'webhook.invalid_url'],
    ['user only', 'https://user@example.com/h', LOCAL, 'webhook.invalid_url'],
    ['too long', `https://example.com/${'a'.repeat(MAX_WEBHOOK_URL_LENGTH)}`, STRICT, 'webhook.invalid_url'],
    ['http while not allowed', 'http://example.com/h', STRICT, 'webhook.url_scheme_not_allowed'],
    ['ftp', 'ftp://example.com/h', LOCAL, 'webhook.url_scheme_not_allowed'],
    ['javascript', 'javascript:alert(1)', LOCAL, 'webhook.url_scheme_not_allowed'],
    ['loopback literal', 'https://127.0.0.1/h', STRICT, 'webhook.url_address_not_allowed'],
    ['decimal loopback', 'https://2130706433/h', STRICT, 'webhook.url_address_not_allowed'],
    ['private 10/8', 'https://10.1.2.3/h', STRICT, 'webhook.url_address_not_allowed'],
    ['private 192.168/16', 'https://192.168.0.10/h', STRICT, 'webhook.url_address_not_allowed'],
    ['link-local metadata', 'https://169.254.169.254/latest', STRICT, 'webhook.url_address_not_allowed'],
    ['IPv6 loopback', 'https://[::1]/h', STRICT, 'webhook.url_address_not_allowed'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/h', STRICT, 'webhook.url_address_not_allowed'],
    ['IPv6 unique local', 'https://[fd00::1]/h', STRICT, 'webhook.url_address_not_allowed'],
    ['localhost name', 'https://localhost/h', STRICT, 'webhook.url_address_not_allowed'],
    ['localhost subdomain', 'https://api.localhost./h', STRICT, 'webhook.url_address_not_allowed'],
    ['unusual port', 'https://example.com:8443/h', STRICT, 'webhook.url_port_not_allowed'],
    ['port 0 where local receivers are allowed', 'http://127.0.0.1:0/h', LOCAL, 'webhook.invalid_url'],
    ['port 0', 'https://example.com:0/h', STRICT, 'webhook.invalid_url'],
    ['hex loopback', 'https://0x7f000001/h', STRICT, 'webhook.url_address_not_allowed'],
    ['port out of range', 'https://example.com:65536/h', LOCAL, 'webhook.invalid_url'],
  ];
  for (const [name, url, policy, code] of refused) {
    it(`refuses ${name}`, () => {
      const { code: got, message } = refusal(() => checkWebhookUrl(url, policy));
      assert.equal(got, code, message);
      assert.match(message, /^url: /);
    });
  }

  const accepted: Array<[string, string, UrlPolicy, string]> = [
    ['public https', 'https://example.com/hooks?a=1', STRICT, 'https://example.com/hooks?a=1'],
    ['public literal', 'https://8.8.8.8/h', STRICT, 'https://8.8.8.8/h'],
    ['normalized host and default port', 'https://EXAMPLE.com:443/h', STRICT, 'https://example.com/h'],
    ['explicit 443', 'https://example.com:443', STRICT, 'https://example.com/'],
    ['local receiver where allowed', 'http://127.0.0.1:4000/h', LOCAL, 'http://127.0.0.1:4000/h'],
    ['localhost where allowed', 'http://localhost:4000/h', LOCAL, 'http://localhost:4000/h'],
    ['an IDN host, stored in its ASCII (punycode) form', 'https://exämple.com/h', STRICT, 'https://xn--exmple-cua.com/h'],
  ];
  for (const [name, url, policy, stored] of accepted) {
    it(`accepts ${name}`, () => assert.equal(checkWebhookUrl(url, policy), stored));
  }
});

describe('webhook event rules', () => {
  it('keeps a valid subset in the order given', () => {
    assert.deepEqual(checkWebhookEvents(['audio.generation.failed', 'audio.generation.succeeded']), ['audio.generation.failed', 'audio.generation.succeeded']);
    assert.deepEqual(checkWebhookEvents(['audio.generation.succeeded']), ['audio.generation.succeeded']);
  });
  const refused: Array<[string, unknown[], string, string]> = [
    ['empty', [], 'webhook.events_empty', 'events:'],
    ['unknown', ['audio.generation.started'], 'webhook.unknown_event', 'events.0:'],
    ['wrong case', ['Audio.Generation.Succeeded'], 'webhook.unknown_event', 'events.0:'],
    ['unknown after a good one', ['audio.generation.failed', 'video.done'], 'webhook.unknown_event', 'events.1:'],
    ['duplicate', ['audio.generation.failed', 'audio.generation.failed'], 'webhook.duplicate_event', 'events.1:'],
  ];
  for (const [name, events, code, prefix] of refused) {
    it(`refuses ${name}`, () => {
      const got = refusal(() => checkWebhookEvents(events));
      assert.equal(got.code, code);
      assert.ok(got.message.startsWith(prefix), got.message);
    });
  }
});
