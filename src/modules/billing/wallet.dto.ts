import { ApiProperty } from '@nestjs/swagger';
import type { WalletResource } from './wallet.service.js';

export class WalletResponseDto implements WalletResource {
  @ApiProperty({ example: 25, description: 'Money in the wallet, USD' })
  balanceUsd!: number;
  @ApiProperty({ example: 0.5, description: 'Reserved by operations still running, USD' })
  heldUsd!: number;
  @ApiProperty({ example: 24.5, description: 'What new operations can reserve: balance − held, USD' })
  availableUsd!: number;
}
