import { createRequire } from 'node:module';
import { TransformationType } from 'class-transformer';
import type { MetadataStorage as TransformerMetadataStorage } from 'class-transformer/types/MetadataStorage.js';
import { getMetadataStorage, type ValidationArguments, ValidationTypes, type ValidatorConstraintInterface } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

/*
 * The fast path of StrictValidationPipe for bodies that are valid. For each DTO class it is
 * compiled once from the declarations plainToInstance and validate() read themselves
 * (class-transformer's and class-validator's metadata storages) and runs each rule through the
 * rule's own constraint object, so no request rule is written here a second time. It answers
 * an instance only when plainToInstance would build an equal one and validate() (whitelist,
 * forbidNonWhitelisted, forbidUnknownValues) would find nothing; anything it is not sure of
 * answers undefined and the pipe takes the full path, which words every 400.
 */

/** class-transformer keeps @Type/@Transform/@Expose/@Exclude here; plainToInstance reads the same object. */
export const transformerMetadata = (createRequire(import.meta.url)('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformerMetadataStorage })
  .defaultMetadataStorage;

type DtoClass = new () => object;
type Condition = (object: object, value: unknown) => boolean;
/** A value the compiled path cannot build the way plainToInstance would (undefined is a value). */
const UNSURE = Symbol('unsure');

interface Rule {
  constraint: ValidatorConstraintInterface;
  each: boolean;
  constraints: unknown[];
}

interface Field {
  name: string;
  /** What validate() passes rules as `targetName`: the name of the instance's class. */
  targetName: string;
  /** ValidateIf / IsOptional conditions: when one is false, validate() skips the field's rules. */
  conditions: Condition[];
  rules: Rule[];
  validatesNested: boolean;
  /** The @Type class of a @ValidateNested field, and whether its declared type is an array. */
  nested?: { compiled: Compiled; arrayDeclared: boolean };
}

interface Compiled {
  type: DtoClass;
  fields: Map<string, Field>;
}

/** null: the class (or a class it nests) uses something the compiled path does not take. */
const compiledClasses = new WeakMap<DtoClass, Compiled | null>();

/** The instance plainToInstance(type, plain) would build, when validate() would pass it; otherwise undefined. */
export function acceptIfValid(type: DtoClass, plain: unknown): object | undefined {
  const compiled = compiledFor(type);
  if (!compiled) return undefined;
  try {
    const instance = build(compiled, plain);
    return instance === UNSURE ? undefined : instance;
  } catch {
    return undefined; // a condition or rule threw: the full path meets the same throw
  }
}

/** Whether the class has a compiled path (exported for the tests). */
export function isCompiled(type: DtoClass): boolean {
  return compiledFor(type) !== null;
}

function compiledFor(type: DtoClass, compiling = new Set<DtoClass>()): Compiled | null {
  let compiled = compiledClasses.get(type);
  if (compiled === undefined) {
    // A class nesting itself is left to the full path rather than compiled half-way.
    if (compiling.has(type)) return null;
    compiling.add(type);
    compiled = compile(type, compiling);
    compiling.delete(type);
    compiledClasses.set(type, compiled);
  }
  return compiled;
}

/** The very list validate() uses for an instance of `type` (inherited rules included) without groups. */
export function validationMetadatasOf(type: DtoClass): ValidationMetadata[] {
  return getMetadataStorage().getTargetValidationMetadatas(type, undefined as unknown as string, false, false, undefined);
}

function compile(type: DtoClass, compiling: Set<DtoClass>): Compiled | null {
  const storage = getMetadataStorage();
  const metadatas = validationMetadatasOf(type);
  if (metadatas.length === 0) return null; // forbidUnknownValues refuses such an instance
  if (transformerMetadata.getStrategy(type) !== 'none' || transformerMetadata.getExposedMetadatas(type).length > 0 || transformerMetadata.getExcludedMetadatas(type).length > 0) {
    return null;
  }
  const fields = new Map<string, Field>();
  for (const metadata of metadatas) {
    const name = metadata.propertyName;
    // plainToInstance skips keys the prototype defines (accessors, methods, Object.prototype's members).
    if (name in type.prototype) return null;
    if (metadata.groups?.length || metadata.always !== undefined || metadata.validateIf) return null;
    let field = fields.get(name);
    if (!field) fields.set(name, (field = { name, targetName: type.name, conditions: [], rules: [], validatesNested: false }));
    switch (metadata.type) {
      case ValidationTypes.CONDITIONAL_VALIDATION:
        field.conditions.push(metadata.constraints[0] as Condition);
        break;
      case ValidationTypes.CUSTOM_VALIDATION:
      case ValidationTypes.IS_DEFINED: {
        // Every built-in rule (IsString, Length, IsIn, …) is a constraint object too: its own validate() is run.
        const constraints = storage.getTargetValidatorConstraints(metadata.constraintCls);
        if (constraints.length === 0 || constraints.some((constraint) => constraint.async)) return null;
        for (const constraint of constraints) field.rules.push({ constraint: constraint.instance, each: metadata.each, constraints: metadata.constraints });
        break;
      }
      case ValidationTypes.NESTED_VALIDATION:
        field.validatesNested = true;
        break;
      case ValidationTypes.WHITELIST:
        break;
      default:
        return null; // promise validation, or a kind this file does not know
    }
  }
  for (const field of fields.values()) {
    if (transformerMetadata.findTransformMetadatas(type, field.name, TransformationType.PLAIN_TO_CLASS).length > 0) return null;
    const typeMetadata = transformerMetadata.findTypeMetadata(type, field.name);
    if (!typeMetadata !== !field.validatesNested) return null; // @Type without @ValidateNested, or the reverse
    if (!typeMetadata) continue;
    // Only a fixed `() => Dto`: a type chosen from the value, or a discriminator, is left to class-transformer.
    if (typeMetadata.typeFunction.length > 0 || typeMetadata.options?.discriminator || typeMetadata.reflectedType === Map || typeMetadata.reflectedType === Set) {
      return null;
    }
    const nested = compiledFor(typeMetadata.typeFunction() as DtoClass, compiling);
    if (!nested) return null;
    field.nested = { compiled: nested, arrayDeclared: typeMetadata.reflectedType === Array };
  }
  // What the constructor sets is validated as is: a key without rules fails the whitelist, and
  // only a scalar default is checked here as validate() checks it (a nested one would not be built).
  const probe = new type() as Record<string, unknown>;
  for (const key of Object.keys(probe)) {
    const value = probe[key];
    if (!fields.has(key) || (typeof value === 'object' && value !== null) || typeof value === 'function') return null;
  }
  return { type, fields };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function isPlainArray(value: unknown): value is unknown[] {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
  for (let index = 0; index < value.length; index++) if (!(index in value)) return false; // forEach would skip a hole
  return true;
}

/**
 * plainToInstance copies JSON scalars as they are, an array of them into a new array, and `{}`
 * into a new `{}`; other objects without @Type (whose keys it filters) are left to it.
 */
function copyValue(value: unknown): unknown {
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (isPlainObject(value) && Object.keys(value).length === 0) return {};
  if (isPlainArray(value) && value.every((item) => item === null || typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean')) {
    return value.slice();
  }
  return UNSURE;
}

function buildNested(nested: NonNullable<Field['nested']>, value: unknown): unknown {
  if (isPlainObject(value)) return build(nested.compiled, value);
  // An array becomes a new array of instances only when the declared type is an array.
  if (!nested.arrayDeclared || !isPlainArray(value)) return UNSURE;
  const items: object[] = [];
  for (const item of value) {
    const instance = build(nested.compiled, item);
    if (instance === UNSURE) return UNSURE;
    items.push(instance);
  }
  return items;
}

function build(compiled: Compiled, plain: unknown): object | typeof UNSURE {
  if (!isPlainObject(plain)) return UNSURE;
  const instance = new compiled.type() as Record<string, unknown>;
  for (const key of Object.keys(plain)) {
    const field = compiled.fields.get(key);
    if (!field) return UNSURE; // an unknown field: the full path names it
    const value = field.nested ? buildNested(field.nested, plain[key]) : copyValue(plain[key]);
    if (value === UNSURE) return UNSURE;
    instance[key] = value;
  }
  for (const field of compiled.fields.values()) if (!passes(field, instance)) return UNSURE;
  return instance;
}

/** validate()'s performValidations for one field, answering only "no error" or "unsure". */
function passes(field: Field, instance: Record<string, unknown>): boolean {
  const value = instance[field.name];
  for (const condition of field.conditions) if (!condition(instance, value)) return true;
  for (const rule of field.rules) {
    const args: ValidationArguments = { targetName: field.targetName, property: field.name, object: instance, value, constraints: rule.constraints };
    if (rule.each && Array.isArray(value)) {
      for (const item of value) if (rule.constraint.validate(item, args) !== true) return false;
    } else if (rule.constraint.validate(value, args) !== true) {
      return false;
    }
  }
  // A nested value was built (and checked) by build(); one the constructor set is refused at compile time.
  return true;
}
