/**
 * Size limits of a text request's structure: the nesting of the whole body, and the JSON schemas
 * it carries (function parameters, structured output schemas, the vendor block's declarations
 * and response schemas). Whatever reads them (the translation, the sandbox building arguments,
 * the upstream) must not be made to do unbounded work, or overflow its stack, by a few hundred
 * bytes of request, so anything beyond these limits is a 400 before any hold. The numbers are in
 * docs/text.md ("Schema limits").
 */
import { MAX_OUTPUT_TOKENS } from '../../../../libs/providers/index.js';
import { invalid } from '../text-errors.js';
import { isObject } from './json-readers.js';

export const SCHEMA_LIMITS = {
  /** JSON nesting levels of one schema document (a schema level is one to two JSON levels). */
  maxDepth: 32,
  /** JSON values (objects, arrays, strings, numbers …) in one schema. */
  maxValues: 20_000,
  /** Entries of all `properties` maps of one schema together (OpenAI's structured-output limit). */
  maxProperties: 5_000,
  /** Characters of all keys and strings of one schema (names, descriptions, enum values). */
  maxChars: 100_000,
  /**
   * Largest `minItems` / `minLength` / `minProperties` / `minContains`: an array item, a character
   * or a property costs at least one output token's worth, so a larger minimum can never be met
   * within the largest output cap — and asks a generator for millions of values.
   */
  maxMinimum: MAX_OUTPUT_TOKENS,
  /** Function declarations of one request (Gemini's own limit). */
  maxFunctionDeclarations: 512,
} as const;

const MINIMUM_KEYWORDS = new Set(['minItems', 'minLength', 'minProperties', 'minContains']);
const MAXIMUM_KEYWORDS = new Set(['maxItems', 'maxLength', 'maxProperties', 'maxContains']);

/** Throws `text.invalid_field` (400) when `schema`, found at `path`, exceeds SCHEMA_LIMITS. */
export function checkSchemaLimits(schema: unknown, path: string): void {
  let values = 0;
  let properties = 0;
  let chars = 0;
  const countChars = (n: number) => {
    chars += n;
    if (chars > SCHEMA_LIMITS.maxChars) throw invalid(path, `schema too large: more than ${SCHEMA_LIMITS.maxChars} characters of names and strings`);
  };
  // Depth is checked on the way down, so even a pathologically nested document stops at maxDepth.
  const visit = (value: unknown, at: string, depth: number): void => {
    if (++values > SCHEMA_LIMITS.maxValues) throw invalid(path, `schema too large: more than ${SCHEMA_LIMITS.maxValues} values`);
    if (depth > SCHEMA_LIMITS.maxDepth) throw invalid(at, `schema nested deeper than ${SCHEMA_LIMITS.maxDepth} levels`);
    if (typeof value === 'string') return countChars(value.length);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) visit(value[i], `${at}.${i}`, depth + 1);
      return;
    }
    if (!isObject(value)) return;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const child = value[key];
      countChars(key.length);
      if (typeof child === 'number') checkCountKeyword(key, child, `${at}.${key}`);
      if (key === 'properties' && isObject(child)) {
        properties += Object.keys(child).length;
        if (properties > SCHEMA_LIMITS.maxProperties) throw invalid(path, `schema too large: more than ${SCHEMA_LIMITS.maxProperties} properties`);
      }
      visit(child, `${at}.${key}`, depth + 1);
    }
  };
  visit(schema, path, 0);
}

function checkCountKeyword(key: string, value: number, at: string): void {
  const minimum = MINIMUM_KEYWORDS.has(key);
  if (!minimum && !MAXIMUM_KEYWORDS.has(key)) return;
  if (!Number.isSafeInteger(value) || value < 0) throw invalid(at, 'must be a non-negative integer');
  if (minimum && value > SCHEMA_LIMITS.maxMinimum) throw invalid(at, `must be at most ${SCHEMA_LIMITS.maxMinimum}`);
}

/** Checks every function declaration of the request (own tools and the vendor block's). */
export function checkDeclarationCount(count: number): void {
  if (count > SCHEMA_LIMITS.maxFunctionDeclarations) throw invalid('tools', `at most ${SCHEMA_LIMITS.maxFunctionDeclarations} function declarations`);
}

/**
 * Deepest JSON nesting of a whole text request body. Messages, parts, tool results and schemas
 * need a few dozen levels; every reader of the body (translation, estimates, the sandbox) walks
 * it recursively, and a body nested 100,000 levels deep (a few hundred KB) would overflow the
 * stack. Checked first, without recursion, and again on JSON the translation parses out of
 * strings (tool arguments and results).
 */
export const MAX_BODY_DEPTH = 100;

export function checkBodyDepth(body: unknown, path = 'body'): void {
  const pending: Array<{ value: unknown; depth: number }> = [{ value: body, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, depth } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_BODY_DEPTH) throw invalid(path, `nested deeper than ${MAX_BODY_DEPTH} levels`);
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) pending.push({ value: child, depth: depth + 1 });
    }
  }
}
