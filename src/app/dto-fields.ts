import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsObject, IsString, Length, Max, Min, ValidateIf, ValidateNested } from 'class-validator';

/** Optional, but `null` is not "absent": a field is either omitted or valid. */
export const Optional = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** An optional object validated as the DTO `type` (and documented as it in OpenAPI). */
export function OptionalNested(type: new () => object): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ type }), Optional(), IsObject(), ValidateNested(), Type(() => type));
}

export { StorableText } from './storable-text.validator.js';

/** The page fields of a domain's task list (`GET /v1/<domain>/…?limit=&after=`); the domain adds its filters. */
export class TaskPageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @Optional() @IsInt() @Min(1) @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @Optional() @IsString() @Length(1, 512)
  after?: string;
}
