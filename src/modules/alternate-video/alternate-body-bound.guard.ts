import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { AlternateErrorCode, alternateInvalid } from './alternate-errors.js';

/** Every field of the creation request; none is an object or a list. */
const FIELDS = new Set(['model', 'prompt', 'negativePrompt', 'image', 'imageTail', 'duration', 'aspectRatio', 'mode']);
/** The request has eight fields: an object with more keys than this is refused before the pipe. */
const MAX_KEYS = 16;

/**
 * Bounds the work a creation body can cause before the global validation pipe (whose cost is
 * quadratic in the keys of one object, synchronous: audio measured 60,000 unknown keys holding the
 * event loop for five seconds; this route's body limit is 32 MiB). A body with more than 16 keys
 * is answered with the 400 the pipe would give for its first unknown key; a field whose value is an
 * object or a list (no field of this request is) is answered as the wrong type, before anything
 * walks it. Every other body passes untouched to the pipe. A guard, as audio's BodyBoundGuard (why there).
 */
@Injectable()
export class AlternateBodyBoundGuard implements CanActivate {
  canActivate(context: ExecutionContext): true {
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const keys = Object.keys(body);
      if (keys.length > MAX_KEYS) {
        const unknown = keys.find((key) => !FIELDS.has(key));
        if (unknown !== undefined) throw alternateInvalid(unknown, 'unknown field', AlternateErrorCode.UnknownField);
      }
      for (const key of keys) {
        const value = (body as Record<string, unknown>)[key];
        if (FIELDS.has(key) && typeof value === 'object' && value !== null) throw alternateInvalid(key, 'must be a single value (a string, or a number where one is documented), not an object or a list');
      }
    }
    return true;
  }
}
