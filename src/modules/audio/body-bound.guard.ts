import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AUDIO_MAX_DIALOGUE_ENTRIES } from './audio.constants.js';
import { AudioErrorCode, audioInvalid } from './audio-errors.js';

/** The fields a body may hold: a leaf's type, an object's fields, or `[entry]` for a list. */
export type BodyShape = 'string' | 'integer' | { readonly [field: string]: BodyShape } | readonly [BodyShape];

/** The audio generation request (creation, estimate, speech): every field the DTOs accept. */
export const AUDIO_REQUEST_SHAPE: BodyShape = {
  model: 'string',
  mode: 'string',
  prompt: 'string',
  controls: { voiceId: 'string', outputFormat: 'string', languageCode: 'string' },
  providerOptions: { voice: { seed: 'integer', applyTextNormalization: 'string' } },
  dialogue: [{ text: 'string', voiceId: 'string' }],
  webhookEndpointId: 'string',
};

/** POST /v1/audio/voices/import. */
export const VOICE_IMPORT_SHAPE: BodyShape = { voiceId: 'string', alias: 'string' };

/** No audio object has more than seven fields: an object with more keys than this is refused here. */
const MAX_KEYS_PER_OBJECT = 64;

/**
 * Bounds the work a request body can cause before the global validation pipe sees it. The pipe
 * (class-transformer, then class-validator) costs time quadratic in the keys of one object and
 * linear in the entries of a list, all of it synchronous: a 650 KB body of 60,000 unknown keys held
 * the event loop for five seconds, a 1 MiB dialogue of 30,000 entries for one. Guards run
 * before pipes; this one walks the parsed body once (the body parser already bounds its size,
 * depth and items) and answers a body that no audio DTO could accept — a dialogue of more than
 * 100 entries, or any object of more than 64 keys — with the 400 the pipe would give, naming the
 * first such problem along the request's shape. Every other body passes untouched to the pipe, so
 * ordinary requests get exactly the answers they got before.
 *
 * A guard, not an interceptor: route guards run after the global API key guard (a 401 still comes
 * first) and before the pipe, without the Observable chain Nest builds for a route that has an
 * interceptor (about 4% of an audio creation's CPU, docs/benchmarks.md).
 */
@Injectable()
export class BodyBoundGuard implements CanActivate {
  constructor(private readonly shape: BodyShape) {}

  /** True, or the 400 the pipe would give (never a 403). */
  canActivate(context: ExecutionContext): true {
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (isRecord(body)) {
      const { dialogue } = body;
      if (Array.isArray(dialogue) && dialogue.length > AUDIO_MAX_DIALOGUE_ENTRIES && isRecord(this.shape) && 'dialogue' in this.shape) {
        throw audioInvalid('dialogue', `must contain no more than ${AUDIO_MAX_DIALOGUE_ENTRIES} elements`);
      }
      if (hasCrowdedObject(body)) {
        const problem = firstProblem(body, this.shape, '');
        if (problem) throw audioInvalid(problem.path, problem.why, problem.unknown ? AudioErrorCode.UnknownField : AudioErrorCode.InvalidField);
      }
    }
    return true;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether any object in the value has more than MAX_KEYS_PER_OBJECT keys (iterative: depth is the parser's, not the stack's). */
function hasCrowdedObject(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'object' && item !== null) stack.push(item);
    } else if (isRecord(value)) {
      const keys = Object.keys(value);
      if (keys.length > MAX_KEYS_PER_OBJECT) return true;
      for (const key of keys) if (typeof value[key] === 'object' && value[key] !== null) stack.push(value[key]);
    }
  }
  return false;
}

const join = (path: string, key: string | number): string => (path ? `${path}.${key}` : String(key));

/** The first field (in the body's order, along the shape) that the pipe would refuse, as the pipe words it. */
function firstProblem(value: unknown, shape: BodyShape, path: string): { path: string; why: string; unknown: boolean } | null {
  if (shape === 'string' || shape === 'integer') {
    if (typeof value !== 'object' || value === null) return null;
    return { path, why: shape === 'string' ? 'must be a string' : 'must be an integer number', unknown: false };
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return { path, why: 'must be an array', unknown: false };
    for (const [index, item] of value.entries()) {
      const problem = firstProblem(item, (shape as readonly [BodyShape])[0], join(path, index));
      if (problem) return problem;
    }
    return null;
  }
  if (!isRecord(value)) return { path, why: 'must be an object', unknown: false };
  const fields = shape as { readonly [field: string]: BodyShape };
  const keys = Object.keys(value);
  const unknown = keys.find((key) => !Object.hasOwn(fields, key));
  if (unknown !== undefined) return { path: join(path, unknown), why: 'unknown field', unknown: true };
  for (const key of keys) {
    const problem = firstProblem(value[key], fields[key]!, join(path, key));
    if (problem) return problem;
  }
  return null;
}
