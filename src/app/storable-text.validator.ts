import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isStorableText, NOT_STORABLE_MESSAGE } from '../../libs/common/index.js';

/**
 * A string the service stores: no U+0000 and no unpaired surrogate (PostgreSQL refuses both; a 400
 * names the field instead of a 500). Apart from dto-fields.ts, which loads @nestjs/swagger: the
 * operator CLI validates the admin requests without it.
 */
export const StorableText = (options?: ValidationOptions): PropertyDecorator =>
  ValidateBy({ name: 'isStorableText', validator: { validate: (value: unknown) => typeof value !== 'string' || isStorableText(value) } }, { message: NOT_STORABLE_MESSAGE, ...options });
