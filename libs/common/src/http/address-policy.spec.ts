import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressRefusal, canonicalAddress, parseOutboundUrl } from './address-policy.js';
import { OutboundRequestError } from './outbound-request.error.js';

describe('addressRefusal', () => {
  const refused = [
    '127.0.0.1',
    '127.255.255.254',
    '::1',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '192.0.0.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::7f00:1', // IPv4-compatible (deprecated), ipaddr.js calls it unicast
    '64:ff9b::7f00:1', // NAT64
    '2002:7f00:1::', // 6to4
    '2001::1', // Teredo
  ];
  for (const address of refused) {
    it(`refuses ${address} when private addresses are not allowed`, () => {
      assert.notEqual(addressRefusal(address, false), null);
    });
  }

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '::ffff:8.8.8.8', '[2606:4700::1111]'];
  for (const address of allowed) {
    it(`allows the public address ${address}`, () => {
      assert.equal(addressRefusal(address, false), null);
    });
  }

  it('allows private addresses only with allowPrivate, and never a non-address', () => {
    assert.equal(addressRefusal('127.0.0.1', true), null);
    assert.equal(addressRefusal('::ffff:10.0.0.1', true), null);
    assert.match(addressRefusal('example.com', true) ?? '', /not an IP address/);
    assert.match(addressRefusal('127.1', false) ?? '', /not an IP address/);
  });

  it('names the range in the refusal', () => {
    assert.match(addressRefusal('::ffff:169.254.169.254', false) ?? '', /169\.254\.169\.254 is in the linkLocal range/);
  });
});

describe('canonicalAddress', () => {
  it('unwraps IPv4-mapped IPv6 and strips brackets', () => {
    assert.equal(canonicalAddress('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalAddress('[::1]'), '::1');
    assert.equal(canonicalAddress('example.com'), undefined);
  });
});

describe('parseOutboundUrl', () => {
  const reasonOf = (url: string, allowHttp = true): string => {
    try {
      parseOutboundUrl(url, allowHttp);
      return 'accepted';
    } catch (err) {
      assert.ok(err instanceof OutboundRequestError);
      return err.reason;
    }
  };

  it('lets the URL parser normalise decimal, hex and octal IPv4 hosts', () => {
    assert.equal(parseOutboundUrl('http://2130706433/', true).literal, '127.0.0.1');
    assert.equal(parseOutboundUrl('http://0x7f.1/', true).literal, '127.0.0.1');
    assert.equal(parseOutboundUrl('http://017700000001/', true).literal, '127.0.0.1');
    assert.equal(parseOutboundUrl('https://[::ffff:127.0.0.1]:8443/', false).literal, '127.0.0.1');
  });

  it('keeps host names as names, with the default port of the scheme', () => {
    const target = parseOutboundUrl('https://media.example.com/a/b.mp4?x=1#frag', false);
    assert.equal(target.literal, undefined);
    assert.equal(target.hostname, 'media.example.com');
    assert.equal(target.port, 443);
    assert.equal(target.path, '/a/b.mp4?x=1');
    assert.equal(parseOutboundUrl('http://example.com/', true).port, 80);
  });

  it('refuses bad URLs, other schemes, plain http unless allowed and user info', () => {
    assert.equal(reasonOf('not a url'), 'invalid_url');
    assert.equal(reasonOf('ftp://example.com/file'), 'scheme_not_allowed');
    assert.equal(reasonOf('file:///etc/passwd'), 'scheme_not_allowed');
    assert.equal(reasonOf('http://example.com/', false), 'scheme_not_allowed');
    assert.equal(reasonOf('https://user:pw@example.com/'), 'invalid_url');
    assert.equal(reasonOf('https://user@example.com/'), 'invalid_url');
    assert.equal(reasonOf('https://example.com/'), 'accepted');
  });
});
