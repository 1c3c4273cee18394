import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, ValidateIf, ValidateNested } from 'class-validator';

/** Optional, but `null` is not "absent": a field is either omitted or valid. */
export const Optional = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** An optional object validated as the DTO `type` (and documented as it in OpenAPI). */
export function OptionalNested(type: new () => object): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ type }), Optional(), IsObject(), ValidateNested(), Type(() => type));
}
