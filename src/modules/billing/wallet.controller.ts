import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { WalletResponseDto } from './wallet.dto.js';
import { WalletService, type WalletResource } from './wallet.service.js';

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
