import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateBy } from 'class-validator';
import { isStorableText, MAX_PAGE_LIMIT, NOT_STORABLE_MESSAGE } from '../../../libs/common/index.js';
import type { LedgerKind } from '../billing/index.js';
import type { KeyEnvironment } from '../identity/index.js';
import { IsUsdAmount } from './usd-amount.validator.js';

/*
 * The admin requests the operator CLI validates too (same rules, same messages). Validation only:
 * their OpenAPI description is in admin-requests.openapi.ts, which admin.dto.ts loads, so the CLI
 * reads these classes without loading @nestjs/swagger (docs/decisions.md › CLI boot).
 */

export const KEY_ENVIRONMENTS: KeyEnvironment[] = ['live', 'test'];
export const LEDGER_KINDS: LedgerKind[] = ['credit', 'hold', 'capture', 'release', 'adjust'];
const NOT_BLANK = /\S/;
/** No whitespace at either end: `same` and `same ` would be two references, two credits. */
const TRIMMED = /^\S(?:[\s\S]*\S)?$/;

/** Text PostgreSQL can store (no NUL, no unpaired surrogate): refused with a 400, not a 500 at the insert. */
const Storable = (): PropertyDecorator =>
  ValidateBy({ name: 'isStorableText', validator: { validate: (value) => typeof value !== 'string' || isStorableText(value), defaultMessage: (args) => `${args?.property ?? 'value'} ${NOT_STORABLE_MESSAGE}` } });

export class CreateWorkspaceDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  @Storable()
  name!: string;
}

export class IssueApiKeyDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  @Storable()
  name!: string;

  @IsOptional()
  @IsIn(KEY_ENVIRONMENTS)
  environment?: KeyEnvironment;
}

export class CreditWalletDto {
  @IsUsdAmount()
  amountUsd!: number;

  @IsString()
  @Length(1, 200)
  @Matches(TRIMMED, { message: 'reference must not be blank nor start or end with whitespace' })
  @Storable()
  reference!: string;

  @IsOptional()
  @IsIn(KEY_ENVIRONMENTS)
  environment?: KeyEnvironment;
}

export class PageQueryDto {
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @IsOptional()
  @IsString()
  @Length(1, 500)
  after?: string;
}

export class WalletQueryDto {
  @IsOptional()
  @IsIn(KEY_ENVIRONMENTS)
  environment?: KeyEnvironment;
}

export class LedgerQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(KEY_ENVIRONMENTS)
  environment?: KeyEnvironment;

  @IsOptional()
  @IsIn(LEDGER_KINDS)
  kind?: LedgerKind;

  @IsOptional()
  @IsString()
  @Length(1, 200)
  subjectId?: string;

  @IsOptional()
  @IsString()
  @Length(1, 50)
  subjectType?: string;
}
