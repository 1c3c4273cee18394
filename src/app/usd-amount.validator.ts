import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { microsToUsd, usdToMicros } from '../../libs/common/index.js';

/**
 * Why `value` is not a USD amount, or null when it is one (an operator's credit, a session's
 * budget: money a client or an operator names, which is never rounded): a JSON
 * number (never a string), finite, above 0, at most `max`, and exact in micro-USD (at most 6
 * decimals). The decimals check is a round trip through micros, so `1e-7`, `0.1 + 0.2` and
 * other values that micros cannot hold exactly are refused instead of being rounded silently.
 */
export function usdAmountProblem(value: unknown, max: number): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
  if (value <= 0) return 'must be greater than 0';
  if (value > max) return `must not be greater than ${max}`;
  if (microsToUsd(usdToMicros(value)) !== value) return 'must have at most 6 decimal places';
  return null;
}

/** class-validator rule for {@link usdAmountProblem}; the message says which part failed. */
export function IsUsdAmount(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isUsdAmount',
      constraints: [max],
      validator: {
        validate: (value: unknown) => usdAmountProblem(value, max) === null,
        defaultMessage: (args?: ValidationArguments) => `${args?.property ?? 'amount'} ${usdAmountProblem(args?.value, max) ?? 'is invalid'}`,
      },
    },
    options,
  );
}
