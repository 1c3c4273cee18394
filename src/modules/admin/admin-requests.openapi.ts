import { ApiProperty, type ApiPropertyOptions, ApiPropertyOptional } from '@nestjs/swagger';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../../libs/common/index.js';
import {
  CreateWorkspaceDto,
  CreditWalletDto,
  IssueApiKeyDto,
  KEY_ENVIRONMENTS,
  LEDGER_KINDS,
  LedgerQueryDto,
  PageQueryDto,
  WalletQueryDto,
} from './admin-requests.dto.js';
import { MAX_CREDIT_USD } from './admin-requests.dto.js';

/*
 * The OpenAPI description of the requests in admin-requests.dto.ts, applied here (as the
 * decorators would be) so the CLI, which validates with those classes, never loads @nestjs/swagger.
 * admin.dto.ts imports this file first: a base class (PageQueryDto) is described before any
 * subclass, as swagger copies a base's properties when a subclass gets its first one.
 */

/** Required properties first, then optional ones (each class declares them in that order). */
function describe(type: abstract new () => object, required: Record<string, ApiPropertyOptions>, optional: Record<string, ApiPropertyOptions> = {}): void {
  for (const [name, options] of Object.entries(required)) ApiProperty(options)(type.prototype, name);
  for (const [name, options] of Object.entries(optional)) ApiPropertyOptional(options)(type.prototype, name);
}

describe(CreateWorkspaceDto, { name: { minLength: 1, maxLength: 200, example: 'Acme' } });

describe(
  IssueApiKeyDto,
  { name: { minLength: 1, maxLength: 200, example: 'backend' } },
  { environment: { enum: KEY_ENVIRONMENTS, default: 'live', description: '`test` keys route every model to the sandbox and draw on the test balance' } },
);

describe(
  CreditWalletDto,
  {
    amountUsd: { example: 50, exclusiveMinimum: true, minimum: 0, maximum: MAX_CREDIT_USD, description: 'USD, above 0, at most 6 decimals' },
    reference: {
      minLength: 1,
      maxLength: 200,
      example: 'invoice-2024-0042',
      description: 'Unique per wallet: a repeat with the same amount changes nothing; with another amount it is a 409',
    },
  },
  { environment: { enum: KEY_ENVIRONMENTS, default: 'live' } },
);

describe(
  PageQueryDto,
  {},
  {
    limit: { minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
    after: { description: '`nextCursor` of the previous page' },
  },
);

describe(WalletQueryDto, {}, { environment: { enum: KEY_ENVIRONMENTS, default: 'live' } });

describe(
  LedgerQueryDto,
  {},
  {
    environment: { enum: KEY_ENVIRONMENTS, description: 'Only this wallet; both when absent' },
    kind: { enum: LEDGER_KINDS, description: 'Only entries of this kind' },
    subjectId: { maxLength: 200, example: 'omni:4f0c…', description: 'Only entries about this subject (a task id, a text generation id)' },
    subjectType: { maxLength: 50, example: 'omni', description: 'Only entries about subjects of this type (`omni`, `audio`, `image`, `text`…)' },
  },
);
