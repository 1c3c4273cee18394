import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyUnauthorized } from '../../app/openapi-errors.js';
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
  @ApiKeyUnauthorized('wallet')
  get(@CurrentKey() key: AuthenticatedKey): Promise<WalletResource> {
    return this.wallet.figures(key.workspaceId, key.environment);
  }
}
