import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RouteConfig } from '@nestjs/platform-fastify';
import { RequestErrorCode } from '../../../libs/common/index.js';
import { ApiErrors, ApiKeyUnauthorized } from '../../app/openapi-errors.js';
import { namedSchema } from '../../app/openapi-schemas.js';
import { ApiKeyRoute, type AuthenticatedKey, CurrentKey } from '../identity/index.js';
import { CreateImageGenerationDto } from './dto/create-image-generation.dto.js';
import { ImageErrorCode as Code } from './image-errors.js';
import { ImageGenerationService, type ImageGenerationResponse } from './image-generation.service.js';

const RESPONSE_SCHEMA = namedSchema('ImageGeneration', {
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
});

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
  @ApiErrors(
    400,
    [
      Code.InvalidField,
      [Code.UnknownField, 'any depth'],
      Code.UnknownModel,
      Code.UnsupportedSize,
      Code.UnsupportedAspectRatio,
      Code.PromptRequired,
      Code.PromptTooLong,
      Code.UnsupportedCandidateCount,
      [Code.InvalidReference, 'not HTTPS or Base64 data, raw `gs://`, bad Base64, over 7 MiB'],
      Code.UnsupportedReferenceFormat,
      Code.ReferenceFetchFailed,
      [Code.ReferencesTooLarge, 'over 20 MiB together'],
      RequestErrorCode.InvalidJson,
      [Code.ContentRefused, 'after the hold: the upstream refuses for safety (hold released, nothing charged)'],
    ],
    { summary: 'every refusal before any hold names the field or `assets.referenceImages.<index>`' },
  )
  @ApiKeyUnauthorized('image')
  @ApiErrors(402, [['image.insufficient_balance', 'the wallet cannot cover the hold (nothing held)']])
  @ApiErrors(413, [[RequestErrorCode.BodyTooLarge, 'over TEXT_BODY_LIMIT_BYTES (32 MiB by default, room for 20 MiB of Base64 references)']])
  @ApiErrors(422, [[Code.NoImage, 'the upstream answered without an image (hold released, nothing charged)']])
  @ApiErrors(502, [[Code.UpstreamFailed, 'the upstream failed for good (hold released, nothing charged)']])
  @ApiErrors(503, [
    [Code.Unavailable, 'before any hold'],
    [Code.UpstreamUnavailable, 'with `Retry-After` when known (hold released, nothing charged)'],
  ])
  generate(@CurrentKey() key: AuthenticatedKey, @Body() dto: CreateImageGenerationDto): Promise<ImageGenerationResponse> {
    return this.images.generate(key, dto);
  }
}
