export * from './src/errors/domain-error.js';
export * from './src/errors/error-domain.js';
export * from './src/money.js';
export * from './src/ids.js';
export * from './src/clock.js';
export * from './src/pagination.js';
export * from './src/http/guarded-http-client.js';
export * from './src/group-commit.js';
