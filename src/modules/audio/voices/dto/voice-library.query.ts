import { Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { IsIn, IsString, Matches, MaxLength, MinLength, validate } from 'class-validator';
import type { VoiceQuery } from '../../../../../libs/providers/index.js';
import { Optional } from '../../../../app/dto-fields.js';
import { invalidQuery } from '../voice-errors.js';

/** The deepest page a client may ask for: 10,000 × 30 voices is past any catalogue, and it bounds the upstream work. */
export const MAX_LIBRARY_PAGE = 10_000;
export const LIBRARY_PAGE_SIZE = 30;

/** The query string as it arrives: strings only (a repeated parameter arrives as an array and is refused). */
class VoiceLibraryQueryDto {
  @Optional() @IsString() @MinLength(1) @MaxLength(100)
  @Matches(/^[^\p{Cc}]*$/u, { message: 'search must not contain control characters' })
  search?: string;

  @Optional() @IsString() @Matches(/^[A-Za-z]{2,3}$/, { message: 'language must be a two- or three-letter language code' })
  language?: string;

  @Optional() @IsIn(['female', 'male', 'neutral'])
  gender?: VoiceQuery['gender'];

  @Optional() @IsIn(['young', 'middle_aged', 'old'])
  age?: VoiceQuery['age'];

  @Optional() @IsString() @Matches(/^(?:0|[1-9][0-9]{0,4})$/, { message: `page must be a zero-based integer up to ${MAX_LIBRARY_PAGE}` })
  page?: string;

  @Optional() @IsString() @Matches(/^[A-Za-z0-9]{1,64}$/, { message: 'voiceId must be an official voice id' })
  voiceId?: string;
}

const QUERY_PARAMETERS = new Set(['search', 'language', 'gender', 'age', 'page', 'voiceId']);

/** What the library service is asked: validated and converted. */
export interface VoiceLibraryRequest {
  search?: string;
  language?: string;
  gender?: VoiceQuery['gender'];
  age?: VoiceQuery['age'];
  page: number;
  voiceId?: string;
}

/**
 * Validates the library's query string with class-validator and answers every problem (an
 * unknown, repeated or malformed parameter) with 400 `audio.invalid_query` naming it. A param
 * pipe rather than the global one, so the query gets its own code and no implicit conversion
 * (which would read `page=` as 0).
 */
@Injectable()
export class VoiceLibraryQueryPipe implements PipeTransform<unknown, Promise<VoiceLibraryRequest>> {
  async transform(value: unknown): Promise<VoiceLibraryRequest> {
    const raw = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
    // Checked by name first: keys such as `constructor` never reach class-validator's whitelist.
    const unknown = Object.keys(raw).find((name) => !QUERY_PARAMETERS.has(name));
    if (unknown !== undefined) throw invalidQuery(`${unknown.slice(0, 64)}: unknown query parameter`);
    const dto = plainToInstance(VoiceLibraryQueryDto, { ...raw });
    const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
    const first = errors[0];
    if (first) {
      const why = Array.isArray(first.value) ? 'must be given once' : (Object.values(first.constraints ?? {})[0] ?? 'is invalid');
      throw invalidQuery(`${first.property}: ${why.replace(`${first.property} `, '')}`);
    }
    const page = dto.page === undefined ? 0 : Number(dto.page);
    if (page > MAX_LIBRARY_PAGE) throw invalidQuery(`page: must be a zero-based integer up to ${MAX_LIBRARY_PAGE}`);
    return {
      search: dto.search,
      language: dto.language?.toLowerCase(),
      gender: dto.gender,
      age: dto.age,
      page,
      voiceId: dto.voiceId,
    };
  }
}
