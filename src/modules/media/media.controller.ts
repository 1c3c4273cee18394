import { Controller, Get, Head, Param, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors } from '../../app/openapi-errors.js';
import { Public } from '../identity/index.js';
import { MediaDelivery } from './media-delivery.service.js';

/** The signed routes' 403 (the public ones have no signature to refuse). */
const SignedLinkRefused = () =>
  ApiErrors(403, [
    ['media.invalid_signature', 'bad or missing signature'],
    ['media.link_expired', 'past `exp`'],
  ]);

const BYTES = { description: 'The bytes (or the requested range), with the stored Content-Type', schema: { type: 'string', format: 'binary' } };

/**
 * Media links. Public routes: the signature (or the unguessable token) is the credential.
 * HEAD routes are declared before GET so Fastify does not add its own HEAD, which would read
 * the whole file to discard it and lose Content-Length.
 */
@ApiTags('media')
@Public()
@ApiProduces('application/octet-stream')
@ApiHeader({ name: 'Range', required: false, description: 'One byte range: `bytes=10-19`, `bytes=100-`, `bytes=-500`' })
@ApiResponse({ status: 200, ...BYTES })
@ApiResponse({ status: 206, ...BYTES, description: 'The requested range, with Content-Range' })
@ApiResponse({ status: 304, description: 'If-None-Match matched the ETag' })
@ApiErrors(416, [['media.range_not_satisfiable', 'with `Content-Range: bytes */<size>`']])
@ApiErrors(404, [['media.not_found', 'deleted, expired or missing media']])
@Controller('media')
export class MediaController {
  constructor(private readonly delivery: MediaDelivery) {}

  @Head('public/:token')
  @ApiOperation({ summary: 'Headers of a public media link' })
  @ApiParam({ name: 'token', description: 'Unguessable token of the public link' })
  headPublic(@Param('token') token: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.delivery.servePublic(token, request, reply);
  }

  @Get('public/:token')
  @ApiOperation({ summary: 'Public media link (images): valid until the object expires, then 404' })
  @ApiParam({ name: 'token', description: 'Unguessable token of the public link' })
  getPublic(@Param('token') token: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.delivery.servePublic(token, request, reply);
  }

  @Head('*')
  @ApiOperation({ summary: 'Headers of a signed media link' })
  @ApiParam({ name: 'path', description: 'Media key, slashes included (e.g. video/<workspaceId>/<taskId>.mp4)' })
  @ApiQuery({ name: 'exp', description: 'Expiry, unix seconds' })
  @ApiQuery({ name: 'sig', description: 'base64url HMAC-SHA256 of key + "\\n" + exp' })
  @SignedLinkRefused()
  headSigned(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.delivery.serveSigned(request, reply);
  }

  @Get('*')
  @ApiOperation({ summary: 'Signed media link (video, audio): valid until `exp` (at most 1 h)' })
  @ApiParam({ name: 'path', description: 'Media key, slashes included (e.g. video/<workspaceId>/<taskId>.mp4)' })
  @ApiQuery({ name: 'exp', description: 'Expiry, unix seconds' })
  @ApiQuery({ name: 'sig', description: 'base64url HMAC-SHA256 of key + "\\n" + exp' })
  @SignedLinkRefused()
  getSigned(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.delivery.serveSigned(request, reply);
  }
}
