import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiPaymentRequiredResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ErrorEnvelopeDto } from '../../app/error-envelope.dto.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateImageGenerationDto } from './dto/create-image-generation.dto.js';
import { ImageGenerationService, type ImageGenerationResponse } from './image-generation.service.js';

const RESPONSE_SCHEMA = {
  type: 'object',
  required: ['id', 'model', 'status', 'outputs'],
  properties: {
    id: { type: 'string', example: 'image:3f0c…' },
    model: { type: 'string' },
    status: { type: 'string', enum: ['succeeded'] },
    outputs: {
      type: 'object',
      required: ['images', 'expiresAt'],
      properties: {
        images: { type: 'array', items: { type: 'string', format: 'uri' }, description: 'Public links, no credentials needed, for 24 hours' },
        expiresAt: { type: 'string', format: 'date-time' },
        text: { type: 'string' },
      },
    },
  },
};

@ApiTags('images')
@ApiKeyRoute()
@Controller('api/svc/v1/images')
export class ImagesController {
  constructor(private readonly images: ImageGenerationService) {}

  @Post('generations')
  @HttpCode(200)
  // Base64 references make large bodies: the route takes the inline-media limit (TEXT_BODY_LIMIT_BYTES).
  @RouteConfig({ bodyLimit: 'text' })
  @ApiOperation({ summary: 'Generate one image (synchronous); the answer carries a public link valid 24 hours' })
  @ApiOkResponse({ schema: RESPONSE_SCHEMA })
  @ApiBadRequestResponse({
    type: ErrorEnvelopeDto,
    description:
      'Every refusal, before any hold, naming the field or `assets.referenceImages.<index>`: `image.invalid_field`, `image.unknown_field` (any depth), ' +
      '`image.unknown_model`, `image.unsupported_size`, `image.unsupported_aspect_ratio`, `image.prompt_required`, `image.prompt_too_long`, ' +
      '`image.unsupported_candidate_count`, `image.invalid_reference` (not HTTPS or Base64 data, raw `gs://`, bad Base64, over 7 MiB), ' +
      '`image.unsupported_reference_format`, `image.reference_fetch_failed`, `image.references_too_large` (over 20 MiB together); ' +
      '`request.invalid_json`. After the hold: `image.content_refused` when the upstream refuses for safety (hold released, nothing charged).',
  })
  @ApiUnauthorizedResponse({ type: ErrorEnvelopeDto, description: '`image.unauthorized`: missing, malformed or revoked API key' })
  @ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`image.insufficient_balance`: the wallet cannot cover the hold (nothing held)' })
  @ApiPayloadTooLargeResponse({ type: ErrorEnvelopeDto, description: '`request.body_too_large`: the body is over TEXT_BODY_LIMIT_BYTES (32 MiB by default, room for 20 MiB of Base64 references)' })
  @ApiUnprocessableEntityResponse({ type: ErrorEnvelopeDto, description: '`image.no_image`: the upstream answered without an image (hold released, nothing charged)' })
  @ApiBadGatewayResponse({ type: ErrorEnvelopeDto, description: '`image.upstream_failed`: the upstream failed for good (hold released, nothing charged)' })
  @ApiServiceUnavailableResponse({
    type: ErrorEnvelopeDto,
    description: '`image.unavailable` (before any hold), `image.upstream_unavailable` with `Retry-After` when known (hold released, nothing charged)',
  })
  generate(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateImageGenerationDto): Promise<ImageGenerationResponse> {
    return this.images.generate(key, dto);
  }
}
