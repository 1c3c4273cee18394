import { invalidField } from './errors/domain-error.js';

/** Every list answers `{items, hasMore, nextCursor}`, newest first (DESIGN §4). */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** Position after which the next page starts: the last row's creation time and id. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.createdAt.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

/** What encodeCursor writes before the bar: `Date.toISOString()` of a year 0000–9999. */
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Control characters (NUL above all) cannot be a row id, and PostgreSQL refuses NUL in text. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Decodes a client's `after` cursor; a malformed one is a 400 naming the field. Only what
 * encodeCursor can produce passes: an ISO time of years 0000–9999 (PostgreSQL cannot compare a
 * JavaScript date of year -271821 or +275760) and an id without control characters.
 */
export function decodeCursor(cursor: string | undefined, field = 'after'): CursorPosition | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const raw = Buffer.from(cursor, 'base64url').toString('utf8');
  const bar = raw.indexOf('|');
  const time = raw.slice(0, bar);
  const createdAt = new Date(time);
  const id = raw.slice(bar + 1);
  if (bar < 0 || !CURSOR_TIME.test(time) || Number.isNaN(createdAt.getTime()) || id === '' || CONTROL_CHARACTER.test(id)) {
    throw invalidField(field, 'malformed cursor');
  }
  return { createdAt, id };
}

/**
 * Builds a page from `limit + 1` rows fetched newest first: the extra row only says that
 * more exist.
 */
export function toPage<Row extends CursorPosition, Item>(rows: Row[], limit: number, map: (row: Row) => Item): Page<Item> {
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept.at(-1);
  return { items: kept.map(map), hasMore, nextCursor: hasMore && last ? encodeCursor(last) : null };
}
