/**
 * Money is integer micro-USD (1 USD = 1,000,000 micros) held in `bigint` everywhere inside the
 * service; it becomes a JSON number only at the edge.
 */
export type Micros = bigint;

export const MICROS_PER_USD = 1_000_000n;

/** 12.345678 → 12345678n. Rounds half away from zero at the sixth decimal. */
export function usdToMicros(usd: number): Micros {
  if (!Number.isFinite(usd)) throw new RangeError(`not a finite amount: ${usd}`);
  return BigInt(Math.round(usd * 1_000_000));
}

/** 12345678n → 12.345678 (exact for any amount below 9 billion USD). */
export function microsToUsd(micros: Micros): number {
  return Number(micros) / 1_000_000;
}

/** Ceiling division for prices computed from fractional units (never under-reserve). */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  return numerator >= 0n ? (numerator + denominator - 1n) / denominator : numerator / denominator;
}

export const maxMicros = (a: Micros, b: Micros): Micros => (a > b ? a : b);
export const minMicros = (a: Micros, b: Micros): Micros => (a < b ? a : b);
