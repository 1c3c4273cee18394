import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Expose, Transform, Type } from 'class-transformer';
import { IsObject, IsString, Validate, ValidateNested, ValidatorConstraint, type ValidatorConstraintInterface, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';
import fc from 'fast-check';
import { DomainError } from '../../libs/common/index.js';
import { CreateWorkspaceDto, CreditWalletDto, IssueApiKeyDto } from '../modules/admin/admin-requests.dto.js';
import { CreateAlternateTaskDto } from '../modules/alternate-video/dto/create-alternate-task.dto.js';
import { CreateAudioGenerationDto, CreateSpeechDto } from '../modules/audio/dto/create-audio-generation.dto.js';
import { ImportVoiceDto } from '../modules/audio/voices/dto/import-voice.dto.js';
import { CreateImageGenerationDto } from '../modules/images/dto/create-image-generation.dto.js';
import { CreateRealtimeSessionDto } from '../modules/realtime/dto/create-realtime-session.dto.js';
import { RegisterGcsPrefixDto } from '../modules/video/gcs-prefix.controller.js';
import { CreateVideoTaskDto } from '../modules/video/dto/create-video-task.dto.js';
import { CreateWebhookEndpointDto } from '../modules/webhooks/dto/create-webhook-endpoint.dto.js';
import { UpdateWebhookEndpointDto } from '../modules/webhooks/dto/update-webhook-endpoint.dto.js';
import { acceptIfValid, isCompiled, transformerMetadata, validationMetadatasOf } from './compiled-validator.js';
import { StrictValidationPipe } from './validation.pipe.js';

type DtoClass = new () => object;

/** The pipe as it was: every body on plainToInstance + validate(). */
class FullPathPipe extends StrictValidationPipe {
  protected override readonly compiled = false;
}
const fullPath = new FullPathPipe();
const pipe = new StrictValidationPipe();

/** The DTOs the app's routes take with @Body. */
const BODY_DTOS: DtoClass[] = [
  CreateAudioGenerationDto,
  CreateSpeechDto,
  CreateVideoTaskDto,
  CreateImageGenerationDto,
  ImportVoiceDto,
  CreateAlternateTaskDto,
  CreateRealtimeSessionDto,
  CreateWebhookEndpointDto,
  UpdateWebhookEndpointDto,
  CreateWorkspaceDto,
  IssueApiKeyDto,
  CreditWalletDto,
  RegisterGcsPrefixDto,
];


function rulesByField(type: DtoClass): Map<string, ValidationMetadata[]> {
  const byField = new Map<string, ValidationMetadata[]>();
  for (const metadata of validationMetadatasOf(type)) {
    byField.set(metadata.propertyName, [...(byField.get(metadata.propertyName) ?? []), metadata]);
  }
  return byField;
}

/*
 * Bodies are drawn from each DTO's own metadata: mostly values near what the rules ask (so that
 * many bodies are valid), sometimes values that break them (wrong type, one past a bound, null,
 * any JSON), with fields left out, unknown and prototype-named keys added, at every level. The
 * judge is the full path, never this generator.
 */
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
/** Samples for the app's own rules (their names come from the metadata): mostly valid ones. */
const CUSTOM_SAMPLES: Record<string, { valid: unknown[]; invalid: unknown[] }> = {
  isMediaUri: { valid: ['https://example.com/a.png', 'gs://bucket-name/object.png', 'http://localhost/x'], invalid: ['ftp://example.com/a', 'gs://B/x', 'https://user:pw@example.com/a'] },
  isStorableText: { valid: ['plain', 'benchmark clip'], invalid: ['nul\u0000inside', 'lone \ud800 surrogate'] },
  isEmptyObject: { valid: [{}], invalid: [{ key: 1 }, []] },
  isUsdAmount: { valid: [1, 0.5, 12.25], invalid: [0, -1, 1e-7, 2_000_000, '1'] },
};

function bound(rules: ValidationMetadata[], name: string, index = 0): number | undefined {
  const rule = rules.find((metadata) => metadata.name === name);
  return rule ? (rule.constraints[index] as number) : undefined;
}

/** A string within the declared bounds (capped: a 14 MiB string proves nothing more), sometimes one past them. */
function nearString(rules: ValidationMetadata[]): fc.Arbitrary<string> {
  const pattern = rules.find((metadata) => metadata.name === 'matches')?.constraints[0];
  const min = bound(rules, 'isLength', 0) ?? bound(rules, 'minLength') ?? 0;
  const max = Math.min(bound(rules, 'isLength', 1) ?? bound(rules, 'maxLength') ?? 40, 40);
  const inside = pattern instanceof RegExp ? fc.stringMatching(pattern) : fc.string({ minLength: min, maxLength: Math.max(min, max) });
  return fc.oneof({ weight: 12, arbitrary: inside }, fc.constantFrom('', 'a', 'ab1', 'x'.repeat(max + 1)));
}

function nearNumber(rules: ValidationMetadata[], integer: boolean): fc.Arbitrary<number> {
  const min = bound(rules, 'min') ?? (rules.some((metadata) => metadata.name === 'isPositive') ? 0.000001 : -1000);
  const max = bound(rules, 'max') ?? 1000;
  const inside = integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true });
  return fc.oneof({ weight: 12, arbitrary: inside }, fc.constantFrom(min - 1, max + 1, min + 0.5, 0, -0));
}

/** An array of a size within the declared bounds (at most 4 here), sometimes one past them. */
function sizedArray(rules: ValidationMetadata[], item: fc.Arbitrary<unknown>): fc.Arbitrary<unknown[]> {
  const min = bound(rules, 'arrayMinSize') ?? 0;
  const max = bound(rules, 'arrayMaxSize') ?? 4;
  return fc.oneof(
    { weight: 12, arbitrary: fc.array(item, { minLength: min, maxLength: Math.min(max, Math.max(min, 4)) }) },
    fc.array(item, { minLength: Math.max(0, min - 1), maxLength: Math.max(0, min - 1) }),
    fc.array(item, { minLength: max + 1, maxLength: max + 1 }),
  );
}

function likelyValue(type: DtoClass, field: string, rules: ValidationMetadata[], depth: number): fc.Arbitrary<unknown> {
  const names = new Set(rules.map((metadata) => metadata.name));
  const nested = rules.some((metadata) => metadata.type === ValidationTypes.NESTED_VALIDATION);
  if (nested) {
    const nestedType = transformerMetadata.findTypeMetadata(type, field).typeFunction() as DtoClass;
    const item = body(nestedType, depth + 1);
    if (!names.has('isArray')) return item;
    return sizedArray(rules, item);
  }
  const item = (each: boolean): fc.Arbitrary<unknown> => {
    const own = rules.filter((metadata) => Boolean(metadata.each) === each);
    const ownNames = new Set(own.map((metadata) => metadata.name));
    const isIn = own.find((metadata) => metadata.name === 'isIn');
    if (isIn) return fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...(isIn.constraints[0] as unknown[])) }, fc.constantFrom('other', 5));
    const equals = own.find((metadata) => metadata.name === 'equals');
    if (equals) return fc.oneof({ weight: 12, arbitrary: fc.constant(equals.constraints[0]) }, fc.constantFrom(2, false));
    for (const [name, { valid, invalid }] of Object.entries(CUSTOM_SAMPLES)) {
      if (ownNames.has(name)) return fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...valid) }, fc.constantFrom(...invalid));
    }
    if (ownNames.has('isBoolean')) return fc.boolean();
    if (ownNames.has('isInt')) return nearNumber(own, true);
    if (ownNames.has('isNumber')) return nearNumber(own, false);
    if (ownNames.has('isString')) return nearString(own);
    if (ownNames.has('isObject')) return fc.constant({});
    return fc.jsonValue({ maxDepth: 1 });
  };
  if (names.has('isArray')) {
    return sizedArray(rules, item(true));
  }
  return item(false);
}

const brokenValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, '', 'text', 7, 1.5, -1, true, [], {}, ['a'], [{}], { extra: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
);

const ABSENT = Symbol('absent');

function body(type: DtoClass, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const fields = [...rulesByField(type)].map(([field, rules]) =>
    fc
      .oneof({ weight: 30, arbitrary: depth > 3 ? fc.constant({}) : likelyValue(type, field, rules, depth) }, { weight: 1, arbitrary: brokenValue }, { weight: 4, arbitrary: fc.constant(ABSENT) })
      .map((value) => [field, value] as const),
  );
  const extra = fc.oneof({ weight: 20, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.tuple(fc.constantFrom('extra', ...PROTOTYPE_NAMES), fc.jsonValue({ maxDepth: 1 })).map((entry) => [entry]) });
  return fc.tuple(fc.tuple(...fields), extra).map(([entries, extras]) => {
    const built: Record<string, unknown> = {};
    // defineProperty: `__proto__` and friends become own keys, as JSON.parse makes them.
    for (const [key, value] of [...entries, ...extras]) if (value !== ABSENT) Object.defineProperty(built, key, { value, enumerable: true, writable: true, configurable: true });
    return built;
  });
}

async function outcome(validationPipe: StrictValidationPipe, value: unknown, type: DtoClass): Promise<unknown> {
  try {
    return { instance: await validationPipe.transform(value, { type: 'body', metatype: type }) };
  } catch (error) {
    assert.ok(error instanceof DomainError, String(error));
    return { status: error.status, code: error.code, message: error.message };
  }
}

describe('compiled validator', () => {
  for (const type of BODY_DTOS) {
    it(`${type.name}: an accepted body is exactly what the full path builds, with no error; every answer is unchanged`, async (t) => {
      assert.ok(isCompiled(type), `${type.name} is expected to have a compiled path`);
      let accepted = 0;
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(body(type), async (drawn) => {
          runs += 1;
          const plain = JSON.parse(JSON.stringify(drawn)) as unknown; // what the body parser hands over
          const instance = acceptIfValid(type, plain);
          const expected = await outcome(fullPath, plain, type);
          if (instance) {
            accepted += 1;
            // deepStrictEqual compares prototypes too: the same class at every level.
            assert.deepStrictEqual({ instance }, expected);
          }
          assert.deepStrictEqual(await outcome(pipe, plain, type), expected);
        }),
        { numRuns: 400 },
      );
      t.diagnostic(`${accepted} of ${runs} bodies took the compiled path`);
      // The property says something only if the compiled path accepts a fair share of bodies.
      assert.ok(accepted >= runs / 20, `${type.name}: only ${accepted} of ${runs} bodies were accepted by the compiled path`);
    });
  }

  it('leaves prototype-named keys, unknown keys and non-plain values to the full path', async () => {
    const valid = { model: 'voice_v4', mode: 'text_to_speech', prompt: 'Hello', controls: { voiceId: 'alice', outputFormat: 'mp3_44100_128' } };
    assert.ok(acceptIfValid(CreateAudioGenerationDto, valid) instanceof CreateAudioGenerationDto);
    for (const text of [
      '{"model":"voice_v4","mode":"text_to_speech","__proto__":{"x":1}}',
      '{"model":"voice_v4","mode":"text_to_speech","controls":{"constructor":"x"}}',
      '{"model":"voice_v4","mode":"text_to_speech","colour":"red"}',
      '{"model":"voice_v4","mode":"text_to_speech","controls":[]}',
      '{"model":"voice_v4","mode":"text_to_speech","controls":null}',
    ]) {
      const plain = JSON.parse(text) as unknown;
      assert.equal(acceptIfValid(CreateAudioGenerationDto, plain), undefined, text);
      assert.deepStrictEqual(await outcome(pipe, plain, CreateAudioGenerationDto), await outcome(fullPath, plain, CreateAudioGenerationDto));
    }
    assert.equal(acceptIfValid(CreateAudioGenerationDto, Object.assign(Object.create(null) as object, valid)), undefined);
  });

  it('never compiles a class whose declarations it does not take, nor a class nesting one', async () => {
    @ValidatorConstraint({ async: true })
    class EventuallyTrue implements ValidatorConstraintInterface {
      validate(): Promise<boolean> {
        return Promise.resolve(true);
      }
    }
    class Supported {
      @IsString() name!: string;
    }
    class Transformed {
      @IsString() @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)) name!: string;
    }
    class AsyncRule {
      @IsString() @Validate(EventuallyTrue) name!: string;
    }
    class Grouped {
      @IsString({ groups: ['admin'] }) name!: string;
    }
    class Renamed {
      @Expose({ name: 'title' }) @IsString() name!: string;
    }
    class NestsTransformed {
      @ValidateNested() @Type(() => Transformed) inner!: Transformed;
    }
    class NestsWithoutType {
      @ValidateNested() inner!: Supported;
    }
    class ObjectDefault {
      @IsObject() meta: object = {};
      @IsString() name!: string;
    }
    class UndeclaredDefault {
      note = 'set by the constructor, without a rule';
      @IsString() name!: string;
    }
    class TypeFromValue {
      @ValidateNested() @Type((options) => (options?.object ? Supported : Transformed)) inner!: Supported;
    }

    assert.ok(isCompiled(Supported)); // the control: the same rule alone is compiled
    assert.ok(acceptIfValid(Supported, { name: ' a ' }) instanceof Supported);
    for (const type of [Transformed, AsyncRule, Grouped, Renamed, ObjectDefault, UndeclaredDefault]) {
      assert.equal(isCompiled(type), false, type.name);
      assert.equal(acceptIfValid(type, { name: ' a ' }), undefined, type.name);
    }
    for (const type of [NestsTransformed, NestsWithoutType, TypeFromValue]) {
      assert.equal(isCompiled(type), false, type.name);
      assert.equal(acceptIfValid(type, { inner: { name: ' a ' } }), undefined, type.name);
    }
    // The full path still applies the transform.
    assert.deepStrictEqual(await pipe.transform({ name: ' a ' }, { type: 'body', metatype: Transformed }), Object.assign(new Transformed(), { name: 'a' }));
  });
});
