import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorDomains } from './error-domain.js';

describe('ErrorDomains: the route prefix of error codes, registered per domain', () => {
  const domains = new ErrorDomains();
  domains.register('audio', ['/v1/audio/', '/api/svc/v1/audio/']);
  domains.register('realtime', ['/v1/audio/realtime']);
  domains.register('wallet', ['/api/svc/v1/wallet']);

  it('takes the longest registered prefix, whatever the registration order', () => {
    const cases: Array<[string, string]> = [
      ['/v1/audio/speech', 'audio'],
      ['/v1/audio/realtime', 'realtime'],
      ['/v1/audio/realtime?model=x', 'realtime'],
      ['/api/svc/v1/audio/voices', 'audio'],
      ['/v1/audio', 'audio'], // the prefix without its trailing slash
      ['/api/svc/v1/wallet', 'wallet'],
      ['/api/svc/v1/wallet/ledger', 'wallet'],
      ['/v1/audiobooks', 'request'],
      ['/nowhere', 'request'],
    ];
    for (const [url, domain] of cases) assert.equal(domains.domainOf(url), domain, url);
  });

  it('qualifies relative codes and passes full ones through', () => {
    assert.equal(domains.qualify('invalid_field', '/v1/audio/speech'), 'audio.invalid_field');
    assert.equal(domains.qualify('unauthorized', '/elsewhere'), 'request.unauthorized');
    assert.equal(domains.qualify('request.too_deep', '/v1/audio/speech'), 'request.too_deep');
  });

  it('accepts a repeated registration and refuses a prefix claimed by two domains', () => {
    domains.register('audio', ['/v1/audio/']);
    assert.throws(() => domains.register('video', ['/v1/audio/']), /\/v1\/audio\/ is registered for "audio" and "video"/);
    assert.equal(domains.domainOf('/v1/audio/speech'), 'audio');
  });
});
