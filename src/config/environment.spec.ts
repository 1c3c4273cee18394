import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
