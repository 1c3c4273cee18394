import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { type AuthenticatedKey, CurrentKey } from '../identity/authenticated-key.js';
import { ApiKeyRoute } from '../identity/route-access.js';
import { WalletService, type WalletResource } from './wallet.service.js';

export class WalletResponseDto implements WalletResource {
  @ApiProperty({ example: 25, description: 'Money in the wallet, USD' })
  balanceUsd!: number;
  @ApiProperty({ example: 0.5, description: 'Reserved by operations still running, USD' })
  heldUsd!: number;
  @ApiProperty({ example: 24.5, description: 'What new operations can reserve: balance − held, USD' })
  availableUsd!: number;
}

@ApiTags('wallet')
@ApiKeyRoute()
@Controller('api/svc/v1/wallet')
export class WalletController {
  constructor(private readonly wallet: WalletService) {}

  @Get()
  @ApiOperation({ summary: "The calling key's workspace wallet (live keys: live balance; test keys: test balance)" })
  @ApiOkResponse({ type: WalletResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`wallet.unauthorized`: missing, malformed, unknown or revoked key' })
  get(@CurrentKey() key: AuthenticatedKey): Promise<WalletResource> {
    return this.wallet.figures(key.workspaceId, key.environment);
  }
}
