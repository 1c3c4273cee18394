import { randomUUID } from 'node:crypto';

/** Public resource id kinds (DESIGN §10): `<kind>:<uuid>`. */
export type IdKind =
  | 'omni'
  | 'image'
  | 'alt'
  | 'audio'
  | 'session'
  | 'webhook'
  | 'delivery'
  | 'event';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export const newId = (kind: IdKind): string => `${kind}:${randomUUID()}`;

export const isUuid = (value: string): boolean => UUID.test(value);

/** True when `value` is `<kind>:<uuid>`; lets a route answer 404 without a query. */
export function isIdOf(kind: IdKind, value: string): boolean {
  return value.startsWith(`${kind}:`) && isUuid(value.slice(kind.length + 1));
}
