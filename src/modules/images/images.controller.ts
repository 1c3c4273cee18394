import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPaymentRequiredResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
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
  @ApiBadRequestResponse({ type: ErrorEnvelopeDto, description: 'every refusal, before any hold (`image.invalid_field`, `image.unsupported_size`, `image.reference_fetch_failed`, …); `image.content_refused` after a safety refusal (nothing charged)' })
  @ApiPaymentRequiredResponse({ type: ErrorEnvelopeDto, description: '`image.insufficient_balance`' })
  @ApiUnprocessableEntityResponse({ type: ErrorEnvelopeDto, description: '`image.no_image`: the upstream answered without an image (nothing charged)' })
  @ApiServiceUnavailableResponse({ type: ErrorEnvelopeDto, description: '`image.unavailable`, `image.upstream_unavailable` (nothing charged)' })
  generate(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateImageGenerationDto): Promise<ImageGenerationResponse> {
    return this.images.generate(key, dto);
  }
}
