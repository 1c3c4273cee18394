/**
 * What to answer to a `Range` header for a representation of `size` bytes (RFC 9110 §14).
 *
 * - no header, another unit, a syntactically invalid header, or several ranges → the whole
 *   representation (200): a server may ignore Range, and ignoring is what RFC 9110 asks for
 *   an invalid one;
 * - `bytes=a-b`, `bytes=a-` and `bytes=-n` → that single span (206), `b` clamped to the end
 *   and a suffix longer than the representation meaning all of it;
 * - a valid range that selects nothing (`a` ≥ size, `-0`, any range of an empty object) → 416.
 *
 * Written by hand rather than taken from @fastify/send's parser, which answers 416 to a suffix
 * longer than the file and to unparsable headers.
 */
export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const BYTES_UNIT = /^\s*bytes\s*=\s*(.*?)\s*$/i;
const SPEC = /^(?:(\d+)\s*-\s*(\d*)|-\s*(\d+))$/;

export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined) return { kind: 'full' };
  const unit = BYTES_UNIT.exec(header);
  if (!unit) return { kind: 'full' };
  const specs = unit[1]!.split(',').map((s) => s.trim());
  // Several ranges would need multipart/byteranges; answering the whole body is allowed.
  if (specs.length !== 1) return { kind: 'full' };
  const spec = SPEC.exec(specs[0]!);
  if (!spec) return { kind: 'full' };

  if (spec[3] !== undefined) {
    const suffix = Number(spec[3]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const first = Number(spec[1]);
  const last = spec[2] === '' ? Infinity : Number(spec[2]);
  if (last < first) return { kind: 'full' }; // invalid range-spec: ignored
  if (first >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start: first, end: Math.min(last, size - 1) };
}
