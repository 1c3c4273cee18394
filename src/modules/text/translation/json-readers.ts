/** Small typed readers of a JSON request body: each refuses a wrong type with 400 `text.invalid_field`. */
import { invalid } from '../text-errors.js';

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function optNumber(body: Json, key: string, path = key): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(path, 'must be a number');
  return value;
}

export function optInteger(body: Json, key: string, path = key): number | undefined {
  const value = optNumber(body, key, path);
  if (value !== undefined && !Number.isInteger(value)) throw invalid(path, 'must be an integer');
  return value;
}

export function optString(body: Json, key: string, path = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(path, 'must be a string');
  return value;
}

export function optBoolean(body: Json, key: string, path = key): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(path, 'must be a boolean');
  return value;
}

export function optObject(body: Json, key: string, path = key): Json | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw invalid(path, 'must be an object');
  return value;
}

/** True when `key` is set to `value` anywhere inside `tree`. */
export function deepHas(tree: unknown, key: string, test: (value: unknown) => boolean): boolean {
  if (Array.isArray(tree)) return tree.some((item) => deepHas(item, key, test));
  if (!isObject(tree)) return false;
  for (const [k, v] of Object.entries(tree)) {
    if (k === key && test(v)) return true;
    if (deepHas(v, key, test)) return true;
  }
  return false;
}
