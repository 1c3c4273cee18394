export * from './gemini-types.js';
export * from './text-provider.js';
export * from './text-errors.js';
export * from './openai-to-gemini.js';
export * from './gemini-to-openai.js';
export * from './sandbox-text.provider.js';
export * from './gemini-text.adapter.js';
