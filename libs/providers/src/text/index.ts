export * from './gemini-types.js';
export * from './text-provider.js';
export * from './sandbox-text.provider.js';
export * from './gemini-text.adapter.js';
export * from './gemini-errors.js';
