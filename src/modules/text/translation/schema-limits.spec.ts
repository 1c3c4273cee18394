import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../../../libs/common/index.js';
import { translateTextRequest } from './translate-request.js';
import { SCHEMA_LIMITS } from './schema-limits.js';

/** `400 text.invalid_field: <message>`, or 'accepted'. */
const outcome = (body: Record<string, unknown>, operation: 'chat' | 'responses' = 'chat'): string => {
  try {
    translateTextRequest(operation, { model: 'vendor-3.8-flash', ...(operation === 'chat' ? { messages: [{ role: 'user', content: 'x' }] } : { input: 'x' }), ...body });
  } catch (error) {
    if (error instanceof DomainError) return `${error.status} ${error.code}: ${error.message}`;
    throw error;
  }
  return 'accepted';
};

const chatTool = (parameters: unknown) => ({ tools: [{ type: 'function', function: { name: 'f', parameters } }] });

/** `{a: {type: object, properties: {a: …}}}` nested `levels` schema levels deep. */
function nested(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
  return schema;
}

describe('schema limits (400 before any hold)', () => {
  it('refuses minItems / minLength / minProperties above 65,536 and count keywords that are not non-negative integers', () => {
    assert.match(outcome(chatTool({ type: 'object', properties: { a: { type: 'array', minItems: 5_000_000 } } })), /^400 text\.invalid_field: tools\.0\.function\.parameters\.properties\.a\.minItems: must be at most 65536/);
    assert.match(outcome(chatTool({ type: 'string', minLength: 65_537 })), /minLength: must be at most 65536/);
    assert.match(outcome(chatTool({ type: 'object', minProperties: 1e9 })), /minProperties: must be at most/);
    assert.match(outcome(chatTool({ type: 'array', maxItems: -1 })), /maxItems: must be a non-negative integer/);
    assert.match(outcome(chatTool({ type: 'string', maxLength: 1.5 })), /maxLength: must be a non-negative integer/);
    assert.equal(outcome(chatTool({ type: 'object', properties: { a: { type: 'string', minLength: 4000, maxLength: 1e9 } } })), 'accepted');
    // A property merely named like a keyword is not a keyword.
    assert.equal(outcome(chatTool({ type: 'object', properties: { minItems: { type: 'integer' } } })), 'accepted');
  });

  it('bounds depth, number of values, properties and characters of one schema', () => {
    assert.equal(outcome(chatTool(nested(15))), 'accepted');
    assert.match(outcome(chatTool(nested(20))), /nested deeper than 32 levels/);
    const wide = Object.fromEntries(Array.from({ length: SCHEMA_LIMITS.maxProperties + 1 }, (_, i) => [`p${i}`, {}]));
    assert.match(outcome(chatTool({ type: 'object', properties: wide })), /more than 5000 properties/);
    assert.match(outcome(chatTool({ type: 'string', enum: Array.from({ length: SCHEMA_LIMITS.maxValues }, (_, i) => String(i)) })), /more than 20000 values/);
    assert.match(outcome(chatTool({ type: 'string', description: 'd'.repeat(SCHEMA_LIMITS.maxChars) })), /more than 100000 characters/);
  });

  it('applies to every place a schema travels: Responses tools, structured output, the vendor block', () => {
    const huge = { type: 'array', minItems: 5_000_000 };
    assert.match(outcome({ tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: huge } } }] }, 'responses'), /^400 text\.invalid_field: tools\.0\.parameters/);
    assert.match(outcome({ text: { format: { type: 'json_schema', name: 'r', schema: huge } } }, 'responses'), /^400 text\.invalid_field: text\.format\.schema\.minItems/);
    assert.match(outcome({ response_format: { type: 'json_schema', json_schema: { name: 'r', schema: huge } } }), /^400 text\.invalid_field: response_format\.json_schema\.schema\.minItems/);
    assert.match(outcome({ providerOptions: { vendor: { tools: [{ function_declarations: [{ name: 'f', parameters_json_schema: huge }] }] } } }), /^400 text\.invalid_field: providerOptions\.vendor\.tools\.0\.function_declarations\.0\.parameters_json_schema\.minItems/);
    assert.match(outcome({ providerOptions: { vendor: { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: huge } } } }), /^400 text\.invalid_field: providerOptions\.vendor\.generationConfig\.responseJsonSchema\.minItems/);
  });

  it('takes at most 512 function declarations (Gemini\'s limit), own and vendor ones together', () => {
    const declarations = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `${prefix}${i}` } }));
    assert.equal(outcome({ tools: declarations(512, 'f') }), 'accepted');
    assert.match(outcome({ tools: declarations(513, 'f') }), /tools: at most 512 function declarations/);
    assert.match(outcome({ tools: declarations(500, 'f'), providerOptions: { vendor: { tools: [{ functionDeclarations: Array.from({ length: 13 }, (_, i) => ({ name: `v${i}` })) }] } } }), /at most 512/);
  });
});

describe('body nesting limit', () => {
  it('refuses a body nested deeper than 100 levels with a 400 instead of overflowing the stack', () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    assert.match(outcome({ metadata: deep }), /^400 text\.invalid_field: body: nested deeper than 100 levels/);
    let fine: Record<string, unknown> = {};
    for (let i = 0; i < 90; i++) fine = { a: fine };
    assert.equal(outcome({ metadata: fine }), 'accepted');
  });
});
