/** `providerOptions.vendor`: Gemini configuration passed through, read in camelCase and bounded. */
import { invalid } from '../text-errors.js';
import { isObject, type Json, optObject } from './json-readers.js';
import { checkSchemaLimits } from './schema-limits.js';

const VENDOR_KEYS = new Set(['generationConfig', 'safetySettings', 'tools', 'toolConfig']);

const camelCase = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * The same object with `snake_case` keys written `camelCase`. Gemini's JSON accepts both
 * spellings of its fields, so the vendor block is read in one (the rules below check camelCase
 * names and a snake_case spelling must not slip past them). Only the keys of this object change:
 * values (schemas, user data) are kept as sent. Both spellings of one field at once are refused.
 */
function camelKeys(object: Json, path: string): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(object)) {
    const name = camelCase(key);
    if (Object.hasOwn(out, name)) throw invalid(`${path}.${key}`, `given twice (as ${name} and ${key})`);
    out[name] = value;
  }
  return out;
}

/** camelKeys on `parent[key]` when it is an object (other shapes are judged where they are used). */
function camelChild(parent: Json, key: string, path: string): void {
  if (isObject(parent[key])) parent[key] = camelKeys(parent[key], `${path}.${key}`);
}

/**
 * `providerOptions.vendor`, normalized to Gemini's camelCase names at every configuration level
 * (generationConfig and its thinkingConfig, toolConfig and its functionCallingConfig, each tool
 * and computerUse, each safety setting), so every rule applies whichever spelling was sent.
 */
export function vendorOptions(body: Json): Json {
  const options = optObject(body, 'providerOptions');
  if (!options) return {};
  const given = optObject(options, 'vendor', 'providerOptions.vendor');
  if (!given) return {};
  const path = 'providerOptions.vendor';
  const vendor = camelKeys(given, path);
  for (const key of Object.keys(vendor)) {
    if (!VENDOR_KEYS.has(key)) throw invalid(`${path}.${key}`, 'unknown field (accepted: generationConfig, safetySettings, tools, toolConfig)');
  }
  if (vendor.generationConfig !== undefined && !isObject(vendor.generationConfig)) throw invalid(`${path}.generationConfig`, 'must be an object');
  if (vendor.toolConfig !== undefined && !isObject(vendor.toolConfig)) throw invalid(`${path}.toolConfig`, 'must be an object');
  if (vendor.tools !== undefined && !Array.isArray(vendor.tools)) throw invalid(`${path}.tools`, 'must be an array');
  if (vendor.safetySettings !== undefined && !Array.isArray(vendor.safetySettings)) throw invalid(`${path}.safetySettings`, 'must be an array');
  // responseSchema / responseJsonSchema live here.
  if (vendor.generationConfig !== undefined) checkSchemaLimits(vendor.generationConfig, `${path}.generationConfig`);
  camelChild(vendor, 'generationConfig', path);
  if (isObject(vendor.generationConfig)) camelChild(vendor.generationConfig, 'thinkingConfig', `${path}.generationConfig`);
  camelChild(vendor, 'toolConfig', path);
  if (isObject(vendor.toolConfig)) camelChild(vendor.toolConfig, 'functionCallingConfig', `${path}.toolConfig`);
  vendor.tools = (vendor.tools as unknown[] | undefined)?.map((tool, i) => {
    if (!isObject(tool)) throw invalid(`${path}.tools.${i}`, 'must be an object');
    // A vendor tool carries function declarations (schemas) in any spelling: its whole tree is bounded.
    checkSchemaLimits(tool, `${path}.tools.${i}`);
    const normalized = camelKeys(tool, `${path}.tools.${i}`);
    camelChild(normalized, 'computerUse', `${path}.tools.${i}`);
    if (isObject(normalized.computerUse)) {
      const env = normalized.computerUse.environment;
      if (env !== undefined && !['ENVIRONMENT_BROWSER', 'ENVIRONMENT_MOBILE', 'ENVIRONMENT_DESKTOP', 'ENVIRONMENT_UNSPECIFIED'].includes(env as string)) {
        throw invalid(`${path}.tools.${i}.computerUse.environment`, 'must be ENVIRONMENT_BROWSER, ENVIRONMENT_MOBILE, ENVIRONMENT_DESKTOP or ENVIRONMENT_UNSPECIFIED (browser)');
      }
    }
    return normalized;
  });
  if (vendor.tools === undefined) delete vendor.tools;
  if (Array.isArray(vendor.safetySettings)) {
    vendor.safetySettings = vendor.safetySettings.map((setting, i) => (isObject(setting) ? camelKeys(setting, `${path}.safetySettings.${i}`) : setting));
  }
  return vendor;
}
