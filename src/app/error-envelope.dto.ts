import { ApiProperty } from '@nestjs/swagger';

export class ErrorBodyDto {
  @ApiProperty({ example: 'video.invalid_field', description: 'Dotted code: the route domain, then the rule' })
  code!: string;
  @ApiProperty({ example: 'controls.duration: must not be greater than 10' })
  message!: string;
  @ApiProperty({ required: false, description: 'On 500 only: quote it to support; it is in our logs' })
  errorId?: string;
}

/** `{error:{code,message}}`: every error except the alternate provider's. */
export class ErrorEnvelopeDto {
  @ApiProperty({ type: ErrorBodyDto })
  error!: ErrorBodyDto;
}
