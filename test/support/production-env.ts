/**
 * What production requires at boot besides NODE_ENV (src/config/environment.ts): an https base and
 * secrets strong enough to pass its checks. Fixed random values, for tests only.
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  PUBLIC_BASE_URL: 'https://svc.example.test',
  MEDIA_SIGNING_KEY: 'ShaHodze_mFi_ofseGLkod91GV_7avE0T3TGSvyUu2s',
  SECRETS_ENCRYPTION_KEY: 'hiiESOg8djbW2/VgPk6HhAKEOlRt2bFBSRLqB0baCaE=',
} as const;
