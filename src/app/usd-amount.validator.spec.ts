import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usdAmountProblem } from './usd-amount.validator.js';

const MAX_CREDIT_USD = 1_000_000;

describe('usdAmountProblem', () => {
  it('accepts positive amounts that micro-USD hold exactly', () => {
    for (const value of [0.000001, 0.01, 1, 12.345678, 25, 999_999.999999, MAX_CREDIT_USD]) {
      assert.equal(usdAmountProblem(value, MAX_CREDIT_USD), null, String(value));
    }
  });

  it('refuses what is not a finite JSON number', () => {
    for (const value of ['10', '', null, undefined, true, [1], { usd: 1 }, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.equal(usdAmountProblem(value, MAX_CREDIT_USD), 'must be a number', String(value));
    }
  });

  it('refuses zero and negative amounts', () => {
    for (const value of [0, -0, -1, -0.000001]) assert.equal(usdAmountProblem(value, MAX_CREDIT_USD), 'must be greater than 0');
  });

  it('refuses amounts above the maximum', () => {
    assert.equal(usdAmountProblem(MAX_CREDIT_USD + 0.000001, MAX_CREDIT_USD), `must not be greater than ${MAX_CREDIT_USD}`);
    assert.equal(usdAmountProblem(5, 4), 'must not be greater than 4');
  });

  it('refuses more than 6 decimals, including exponent forms and binary noise', () => {
    for (const value of [1.1234567, 1e-7, 0.0000005, 0.1 + 0.2, 3.0000000001]) {
      assert.equal(usdAmountProblem(value, MAX_CREDIT_USD), 'must have at most 6 decimal places', String(value));
    }
  });
});
