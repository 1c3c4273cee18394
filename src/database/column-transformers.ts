import type { ValueTransformer } from 'typeorm';

/** PostgreSQL `bigint` arrives as a string; money lives in `bigint` micros inside the service. */
export const bigintTransformer: ValueTransformer = {
  to: (value: bigint | null | undefined) => (value === null || value === undefined ? value : value.toString()),
  from: (value: string | null) => (value === null ? null : BigInt(value)),
};
