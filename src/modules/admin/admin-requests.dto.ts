import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { MAX_PAGE_LIMIT } from '../../../libs/common/index.js';
import { StorableText } from '../../app/storable-text.validator.js';
import type { LedgerKind } from '../billing/index.js';
import type { KeyEnvironment } from '../identity/index.js';
import { IsUsdAmount } from '../../app/usd-amount.validator.js';

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

export class CreateWorkspaceDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  @StorableText()
  name!: string;
}

export class IssueApiKeyDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  @StorableText()
  name!: string;

  @IsOptional()
  @IsIn(KEY_ENVIRONMENTS)
  environment?: KeyEnvironment;
}

/** The largest single credit an operator can make (a typo guard, not a business limit). */
export const MAX_CREDIT_USD = 1_000_000;

export class CreditWalletDto {
  @IsUsdAmount(MAX_CREDIT_USD)
  amountUsd!: number;

  @IsString()
  @Length(1, 200)
  @Matches(TRIMMED, { message: 'reference must not be blank nor start or end with whitespace' })
  @StorableText()
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
