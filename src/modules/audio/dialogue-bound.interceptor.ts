import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { AUDIO_MAX_DIALOGUE_ENTRIES } from './audio.constants.js';
import { audioInvalid } from './audio-errors.js';

/**
 * Refuses a dialogue of more than 100 entries before the validation pipe sees the body. The pipe
 * instantiates and validates every entry, synchronously, before it reports the array's size: a
 * 1 MiB body of 30,000 tiny entries held the event loop for most of a second. Interceptors run
 * before pipes, so this bounds the work to one length check; the answer is the one the DTO gives
 * (400 `audio.invalid_field`, "dialogue: must contain no more than 100 elements").
 */
@Injectable()
export class DialogueBoundInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const { dialogue } = body as { dialogue?: unknown };
      if (Array.isArray(dialogue) && dialogue.length > AUDIO_MAX_DIALOGUE_ENTRIES) {
        throw audioInvalid('dialogue', `must contain no more than ${AUDIO_MAX_DIALOGUE_ENTRIES} elements`);
      }
    }
    return next.handle();
  }
}
