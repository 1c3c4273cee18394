import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppConfig } from './app-config.js';
import { validateEnvironment } from './environment.js';

describe('configuration: validated once, every problem named', () => {
  it('works out of the box for local development (every variable has a working default)', () => {
    const env = validateEnvironment({});
    assert.equal(env.APP_ROLE, 'all');
    assert.equal(env.PORT, 3000);
    assert.match(env.DATABASE_URL, /^postgres:\/\/.*127\.0\.0\.1:5432\/svc$/);
    assert.equal(env.OUTBOUND_ALLOW_HTTP, false);
  });

  it('names each bad variable, all at once', () => {
    assert.throws(
      () => validateEnvironment({ APP_ROLE: 'both', PORT: 'eighty', OUTBOUND_ALLOW_HTTP: 'maybe', LOG_LEVEL: 'loud' }),
      (error: Error) => {
        for (const name of ['APP_ROLE', 'PORT', 'OUTBOUND_ALLOW_HTTP', 'LOG_LEVEL']) assert.match(error.message, new RegExp(`- ${name}: `), name);
        return true;
      },
    );
  });

  it('refuses the development secrets in production, naming the missing ones', () => {
    assert.throws(
      () => validateEnvironment({ NODE_ENV: 'production' }),
      (error: Error) => /ADMIN_TOKEN: must be set in production/.test(error.message) && /MEDIA_SIGNING_KEY: must be set in production/.test(error.message),
    );
  });

  it('treats an empty value as unset (so `.env.example` copied as is works)', () => {
    assert.equal(validateEnvironment({ GEMINI_API_KEY: '', OUTBOUND_EXTRA_CA_FILE: '' }).GEMINI_API_KEY, undefined);
  });

  it('asks for the S3 settings only when MEDIA_DRIVER=s3, and says which one is missing', () => {
    assert.equal(validateEnvironment({}).MEDIA_DRIVER, 'local');
    assert.throws(
      () => validateEnvironment({ MEDIA_DRIVER: 's3' }),
      (error: Error) => /- MEDIA_S3_BUCKET: MEDIA_S3_BUCKET is required when MEDIA_DRIVER=s3/.test(error.message),
    );
    assert.throws(
      () => validateEnvironment({ MEDIA_DRIVER: 's3', MEDIA_S3_BUCKET: 'media', MEDIA_S3_ACCESS_KEY_ID: 'id', MEDIA_S3_KEY_PREFIX: 'svc' }),
      (error: Error) => /MEDIA_S3_SECRET_ACCESS_KEY is required/.test(error.message) && /- MEDIA_S3_KEY_PREFIX: /.test(error.message),
    );
    const env = validateEnvironment({ MEDIA_DRIVER: 's3', MEDIA_S3_BUCKET: 'media', MEDIA_S3_ENDPOINT: 'http://minio:9000', MEDIA_S3_KEY_PREFIX: 'svc/prod/' });
    assert.equal(env.MEDIA_S3_REGION, 'us-east-1');
    assert.equal(env.MEDIA_S3_PRESIGNED_LINKS, false);
    assert.equal(env.MEDIA_S3_KEY_PREFIX, 'svc/prod/');
  });

  describe('production refuses placeholder and weak secrets, naming each variable', () => {
    const strong = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'Zq3vR8mN2xK7pL4wT9bF6hJ1',
      MEDIA_SIGNING_KEY: 'ShaHodze_mFi_ofseGLkod91GV_7avE0T3TGSvyUu2s',
      SECRETS_ENCRYPTION_KEY: 'hiiESOg8djbW2/VgPk6HhAKEOlRt2bFBSRLqB0baCaE=',
    };
    const refusals: Array<[string, Record<string, string>, RegExp]> = [
      ['the .env.example admin token', { ADMIN_TOKEN: 'local-admin-token-change-me' }, /- ADMIN_TOKEN: is a placeholder/],
      ['the .env.example signing key', { MEDIA_SIGNING_KEY: 'local-media-signing-key-change-me-0123456789' }, /- MEDIA_SIGNING_KEY: is a placeholder/],
      ['the .env.example encryption key', { SECRETS_ENCRYPTION_KEY: 'bG9jYWwtc2VjcmV0cy1rZXktY2hhbmdlLW1lLTAxMjM=' }, /- SECRETS_ENCRYPTION_KEY: is a placeholder/],
      ['a "change me" word in a signing key', { MEDIA_SIGNING_KEY: 'please-CHANGEME-aK8#mQ2$vL9@xR4!tN6&wP3*zB7' }, /- MEDIA_SIGNING_KEY: is a placeholder/],
      ['a 32-character hex signing key (16 bytes)', { MEDIA_SIGNING_KEY: '9f86d081884c7d659a2feaa0c55ad015' }, /- MEDIA_SIGNING_KEY: is too weak \(about 165 bits; at least 256 needed\)/],
      ['one character repeated', { MEDIA_SIGNING_KEY: 'a'.repeat(64) }, /- MEDIA_SIGNING_KEY: is too weak/],
      ['a short run repeated', { ADMIN_TOKEN: 'Ab1!Ab1!Ab1!Ab1!Ab1!Ab1!Ab1!Ab1!' }, /- ADMIN_TOKEN: is too weak/],
      ['a lowercase admin token of 16 letters', { ADMIN_TOKEN: 'qwertyuiopasdfgh' }, /- ADMIN_TOKEN: is too weak \(about 75 bits; at least 128 needed\)/],
      ['an encryption key that decodes to typed text', { SECRETS_ENCRYPTION_KEY: Buffer.from('my own very secret key 123456789').toString('base64') }, /- SECRETS_ENCRYPTION_KEY: does not look random/],
      ['an encryption key of one byte repeated', { SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }, /- SECRETS_ENCRYPTION_KEY: does not look random/],
    ];
    for (const [name, override, message] of refusals) {
      it(`refuses ${name}`, () => {
        assert.throws(() => validateEnvironment({ ...strong, ...override }), (error: Error) => message.test(error.message));
      });
    }

    it('accepts values drawn as the docs say (openssl rand -base64 32 / -hex 32), and weak ones outside production', () => {
      assert.equal(validateEnvironment(strong).NODE_ENV, 'production');
      assert.doesNotThrow(() => validateEnvironment({ ...strong, MEDIA_SIGNING_KEY: 'c1f2b4a09e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29180706f5e4d3c2b1a090' }));
      assert.doesNotThrow(() => validateEnvironment({ ...strong, NODE_ENV: 'development', MEDIA_SIGNING_KEY: 'a'.repeat(64) }));
    });

    it('names a malformed secret once, for its format', () => {
      assert.throws(
        () => validateEnvironment({ ...strong, SECRETS_ENCRYPTION_KEY: 'short' }),
        (error: Error) => error.message.split('\n').filter((line) => line.includes('SECRETS_ENCRYPTION_KEY')).length === 1 && /must be 32 bytes in base64/.test(error.message),
      );
    });
  });

  it('mints links on the port the service listens on unless PUBLIC_BASE_URL is set', () => {
    assert.equal(AppConfig.from({ PORT: '4100' }).publicBaseUrl, 'http://127.0.0.1:4100');
    assert.equal(AppConfig.from({}).publicBaseUrl, 'http://127.0.0.1:3000');
    assert.equal(AppConfig.from({ PORT: '4100', PUBLIC_BASE_URL: 'https://svc.example.com/' }).publicBaseUrl, 'https://svc.example.com');
  });
});
