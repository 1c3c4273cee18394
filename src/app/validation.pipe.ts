import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { type ValidationError, validate } from 'class-validator';
import { CommonErrorCode, DomainError, isStorableText, NOT_STORABLE_MESSAGE } from '../../libs/common/index.js';
import { acceptIfValid } from './compiled-validator.js';

/** class-validator's type and format checks (isString, isInt, isIn, …) are named `is…`; `isLength` is a range. */
const TYPE_RULE = /^is(?!Length$)[A-Z]/;

/**
 * The rule to report when a field breaks several: a missing field is "required", a value of the
 * wrong type gets its type check, not whichever range rule class-validator happens to list first
 * (`label: 5` used to answer "must be shorter than or equal to 100 characters").
 */
function mainProblem(error: ValidationError): { rule: string; why: string } {
  const entries = Object.entries(error.constraints ?? {});
  // A type check first (a number where a string belongs is "must be a string", not a length).
  const [rule, why] = entries.find(([name]) => TYPE_RULE.test(name)) ?? entries[0]!;
  if (error.value === undefined && rule !== 'whitelistValidation' && rule !== 'unknownValue') return { rule, why: 'is required' };
  // class-validator's own words ("each value in nested property x must be either object or array") name no type the field takes.
  if (rule === 'nestedValidation') return { rule, why: 'must be an object' };
  return { rule, why: why.replace(`${error.property} `, '') };
}

/**
 * Keys named like Object.prototype members (`constructor`, `toString`, …) never name a DTO field,
 * and class-transformer skips them silently (or throws inside), so the whitelist would never see
 * them: they are refused here, at any depth, as unknown fields.
 */
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype));

function prototypeKeyPath(value: unknown, parent = ''): string | null {
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const path = parent ? `${parent}.${key}` : key;
    if (PROTOTYPE_KEYS.has(key)) return path;
    const nested = prototypeKeyPath(child, path);
    if (nested) return nested;
  }
  return null;
}

/** The first query parameter (a string or a list of them) holding text PostgreSQL cannot store, or null. */
function unstorableParameter(query: unknown): string | null {
  if (query === null || typeof query !== 'object') return null;
  for (const [name, value] of Object.entries(query)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((item) => typeof item === 'string' && !isStorableText(item))) return name;
  }
  return null;
}

/** `assets.referenceImages.0` style path of the first failing field, and why it failed. */
function firstProblem(errors: ValidationError[], parent = ''): { path: string; unknown: boolean; why: string } | null {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      const { rule, why } = mainProblem(error);
      const unknown = rule === 'whitelistValidation' || rule === 'unknownValue';
      return { path, unknown, why: unknown ? 'unknown field' : why };
    }
    const nested = firstProblem(error.children ?? [], path);
    if (nested) return nested;
  }
  return null;
}

/**
 * class-validator on every DTO: unknown properties at any level are refused (whitelist +
 * forbidNonWhitelisted), and the 400 names the first failing field. Codes are relative
 * (`invalid_field`, `unknown_field`) and get the route's domain prefix in the filter.
 */
@Injectable()
export class StrictValidationPipe implements PipeTransform {
  /** false keeps every body on the full path (the tests compare both paths). */
  protected readonly compiled: boolean = true;

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A query string reaches SQL filters: text PostgreSQL cannot take is a 400 naming it, not a 500.
    if (metadata.type === 'query') {
      const unstorable = unstorableParameter(value);
      if (unstorable) throw new DomainError(400, CommonErrorCode.InvalidField, `${unstorable}: ${NOT_STORABLE_MESSAGE}`);
    }
    const type = metadata.metatype;
    if (!type || metadata.type === 'custom' || [String, Boolean, Number, Array, Object].includes(type as never)) return value;
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw new DomainError(400, CommonErrorCode.InvalidField, 'request body must be a JSON object');
    }
    if (metadata.type === 'body' && this.compiled) {
      // A valid body is built and checked by the DTO's compiled path (compiled-validator.ts);
      // whatever it is unsure of, every 400 included, takes the full path below.
      const accepted = acceptIfValid(type as new () => object, value);
      if (accepted) return accepted;
    }
    const reserved = prototypeKeyPath(value);
    if (reserved) throw new DomainError(400, CommonErrorCode.UnknownField, `${reserved}: unknown field`);
    const instance = plainToInstance(type as new () => object, value ?? {}, { enableImplicitConversion: metadata.type === 'query' });
    const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
    const problem = firstProblem(errors);
    if (problem) {
      throw new DomainError(400, problem.unknown ? CommonErrorCode.UnknownField : CommonErrorCode.InvalidField, `${problem.path}: ${problem.why}`);
    }
    return instance;
  }
}
