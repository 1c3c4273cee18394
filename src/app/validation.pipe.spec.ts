import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../../libs/common/index.js';
import { StrictValidationPipe } from './validation.pipe.js';

class InnerDto {
  @IsOptional() @IsIn(['a', 'b'])
  mode?: string;
}

class SampleDto {
  @IsString() @MaxLength(5)
  name!: string;

  @IsInt() @Min(1) @Max(10)
  count!: number;

  @IsOptional() @ValidateNested({ each: true }) @Type(() => InnerDto)
  items?: InnerDto[];

  @IsOptional() @IsString() @Length(1, 8)
  code?: string;
}

const pipe = new StrictValidationPipe();

async function problem(value: unknown, type: 'body' | 'query' = 'body'): Promise<string> {
  try {
    await pipe.transform(value, { type, metatype: SampleDto });
  } catch (error) {
    assert.ok(error instanceof DomainError);
    assert.equal(error.status, 400);
    return `${error.code} ${error.message}`;
  }
  return 'accepted';
}

describe('StrictValidationPipe', () => {
  it('accepts a valid body and returns the DTO instance', async () => {
    const value = await pipe.transform({ name: 'ab', count: 3, items: [{ mode: 'a' }] }, { type: 'body', metatype: SampleDto });
    assert.ok(value instanceof SampleDto);
    assert.ok(value.items?.[0] instanceof InnerDto);
  });

  it('names the first failing field with the rule that tells the client most', async () => {
    assert.equal(await problem({ name: 5, count: 3 }), 'invalid_field name: must be a string');
    assert.equal(await problem({ name: 'toolong', count: 3 }), 'invalid_field name: must be shorter than or equal to 5 characters');
    assert.equal(await problem({ name: 'ab', count: '3' }), 'invalid_field count: must be an integer number');
    assert.equal(await problem({ name: 'ab', count: 11 }), 'invalid_field count: must not be greater than 10');
    assert.equal(await problem({ name: 'ab' }), 'invalid_field count: is required');
    // `isLength` is named like a type check but is a range: the type is reported.
    assert.equal(await problem({ name: 'ab', count: 3, code: 123 }), 'invalid_field code: must be a string');
    assert.equal(await problem({ name: 'ab', count: 3, code: 'toolongcode' }), 'invalid_field code: must be shorter than or equal to 8 characters');
    assert.equal(await problem({ name: 'ab', count: 3, items: [{ mode: 'a' }, { mode: 'z' }] }), 'invalid_field items.1.mode: must be one of the following values: a, b');
    // A list item that should be an object: said so, not in class-validator's "either object or array".
    assert.equal(await problem({ name: 'ab', count: 3, items: ['a'] }), 'invalid_field items.0: must be an object');
  });

  it('refuses unknown fields at every level', async () => {
    assert.equal(await problem({ name: 'ab', count: 3, extra: 1 }), 'unknown_field extra: unknown field');
    assert.equal(await problem({ name: 'ab', count: 3, items: [{ mode: 'a', colour: 'red' }] }), 'unknown_field items.0.colour: unknown field');
  });

  it('refuses a body that is not a JSON object', async () => {
    for (const value of [null, [], 'text', 42]) assert.equal(await problem(value), 'invalid_field request body must be a JSON object');
  });

  it('converts query strings to the declared types', async () => {
    const value = (await pipe.transform({ name: 'ab', count: '3' }, { type: 'query', metatype: SampleDto })) as SampleDto;
    assert.equal(value.count, 3);
  });

  it('refuses a query parameter PostgreSQL cannot store (a NUL, a lone surrogate), even one the DTO takes as it is', async () => {
    assert.equal(await problem({ name: 'a\u0000b', count: '3' }, 'query'), 'invalid_field name: must not contain NUL characters or unpaired UTF-16 surrogates');
    assert.equal(await problem({ name: 'ab', count: '3', code: ['ok', '\ud800'] }, 'query'), 'invalid_field code: must not contain NUL characters or unpaired UTF-16 surrogates');
  });
});
