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
});
