const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/** What makes a JSON body too costly to parse and walk. */
export type JsonShapeProblem = 'too_deep' | 'too_many_items';

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth` (`{"a":[1]}` is depth 2),
 * or holds more than `maxItems` items (objects, arrays and the elements or members after a
 * comma: a bound on every value JSON.parse would build).
 *
 * Runs on the raw text before JSON.parse, so a hostile body is refused before anything walks
 * it recursively (class-transformer, the validation pipe, the text translation all recurse),
 * and before JSON.parse spends seconds on the event loop building millions of tiny values (a
 * 32 MiB text body of `[],` took it 2 to 20 s). One pass (two over a string with escaped
 * quotes), no recursion, constant memory; string contents are skipped with indexOf, so large
 * inline media (base64 data URLs) cost little. It does not validate the JSON: brackets and
 * commas are counted outside strings only, and JSON.parse judges the rest afterwards.
 */
export function jsonShapeProblem(text: string, maxDepth: number, maxItems = Infinity): JsonShapeProblem | null {
  let depth = 0;
  let items = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE) {
      i = endOfString(text, i);
      if (i === -1) return null; // unterminated string: JSON.parse refuses it
    } else if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      if (++depth > maxDepth) return 'too_deep';
      if (++items > maxItems) return 'too_many_items';
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) {
      depth--;
    } else if (char === COMMA) {
      if (++items > maxItems) return 'too_many_items';
    }
  }
  return null;
}

/** Whether JSON text nests objects and arrays deeper than `maxDepth` (see jsonShapeProblem). */
export const exceedsJsonDepth = (text: string, maxDepth: number): boolean => jsonShapeProblem(text, maxDepth) === 'too_deep';

/** Index of the quote that closes the string opened at `start`, or -1. */
function endOfString(text: string, start: number): number {
  // Most strings hold no escaped quote: jump to the next quote at memchr speed.
  const quote = text.indexOf('"', start + 1);
  if (quote === -1 || text.charCodeAt(quote - 1) !== BACKSLASH) return quote;
  // A backslash before it: walk the string, stepping over each escape (two characters).
  for (let i = start + 1; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === BACKSLASH) i++;
    else if (char === QUOTE) return i;
  }
  return -1;
}
