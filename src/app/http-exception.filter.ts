import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import {
  CommonErrorCode,
  DomainError,
  type ErrorDomains,
  EnvelopeError,
  RequestErrorCode,
} from '../../libs/common/index.js';
import { isConnectionError } from '../database/connection-errors.js';

interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Nest's own HTTP exceptions (unknown route, wrong method) in our envelope. */
function fromHttpException(exception: HttpException): { status: number; code: string; message: string } {
  const status = exception.getStatus();
  const response = exception.getResponse();
  const message =
    typeof response === 'object' && response !== null && 'message' in response
      ? String((response as { message: unknown }).message)
      : exception.message;
  if (status === 404 && message.startsWith('Cannot ')) return { status, code: RequestErrorCode.RouteNotFound, message };
  const code =
    status === 404 ? CommonErrorCode.NotFound
    : status === 405 ? CommonErrorCode.MethodNotAllowed
    : status === 413 ? RequestErrorCode.BodyTooLarge
    : status === 415 ? RequestErrorCode.UnsupportedMediaType
    : status < 500 ? CommonErrorCode.InvalidField
    : CommonErrorCode.Internal;
  return { status, code, message };
}

/**
 * Fastify's own errors (body parsing, limits, the router's refusals), raised before a route
 * handler runs. Their messages quote the URL; ours never do (it may be huge, or hold a secret).
 */
function fromFastifyError(error: { code?: string; statusCode?: number; message: string }): { status: number; code: string; message: string } | null {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { status: 400, code: RequestErrorCode.BadUrl, message: 'the URL has a malformed percent-encoding' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, code: RequestErrorCode.UriTooLong, message: 'a path segment of the URL is too long' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: RequestErrorCode.BodyTooLarge, message: 'request body is larger than the limit' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: RequestErrorCode.UnsupportedMediaType, message: 'send the body as application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: RequestErrorCode.InvalidJson, message: 'request body is not valid JSON' };
  }
  // Fastify's JSON parser throws a SyntaxError tagged with statusCode 400.
  if (error instanceof SyntaxError && (error as SyntaxError & { statusCode?: number }).statusCode === 400) {
    return { status: 400, code: RequestErrorCode.InvalidJson, message: `request body is not valid JSON: ${error.message}` };
  }
  return null;
}

/**
 * Turns every error into the spec's envelope: `{error:{code,message}}` with the route's domain
 * prefix, or an EnvelopeError's own body. Anything unexpected is a 500 with an error id that is
 * also logged with the stack; the stack never reaches the client.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly domains: ErrorDomains) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    this.send(exception, host.switchToHttp().getRequest<FastifyRequest>(), host.switchToHttp().getResponse<FastifyReply>());
  }

  /** Also Fastify's `frameworkErrors` handler: the router's refusals, before any route or hook. */
  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const answer = this.answer(exception, request);
    if (reply.sent) return;
    void reply
      .status(answer.status)
      .headers({ 'content-type': 'application/json; charset=utf-8', ...(answer.headers ?? {}) })
      .send(answer.body);
  }

  answer(exception: unknown, request: Pick<FastifyRequest, 'url' | 'method' | 'id'>): ErrorAnswer {
    if (exception instanceof EnvelopeError) return { status: exception.status, body: exception.body(), headers: exception.headers };
    // A domain may answer in its own envelope (the alternate provider's); `{error:{code,message}}` otherwise.
    const render = this.domains.envelopeOf(request.url);
    const envelope = (status: number, code: string, message: string, headers?: Record<string, string>): ErrorAnswer => {
      const qualified = this.domains.qualify(code, request.url);
      return { status, body: render ? render({ status, code: qualified, message }) : { error: { code: qualified, message } }, headers };
    };
    if (exception instanceof DomainError) return envelope(exception.status, exception.code, exception.message, exception.headers);
    // Nest wraps Fastify's own errors (body parser, body limit) in an HttpException; the cause says which.
    const cause = exception instanceof HttpException ? exception.cause : exception;
    const fastifyError = cause instanceof Error ? fromFastifyError(cause as Error & { code?: string }) : null;
    if (fastifyError) return envelope(fastifyError.status, fastifyError.code, fastifyError.message);
    if (exception instanceof HttpException) {
      const known = fromHttpException(exception);
      if (known.status < 500) return envelope(known.status, known.code, known.message);
    }
    // The database stayed unreachable through the retries of the call that needed it: a 503 the
    // client may retry, not an internal error.
    if (isConnectionError(exception)) {
      this.logger.warn({ msg: 'database unreachable through the retries of this request', reqId: request.id, method: request.method, url: request.url, err: exception });
      return envelope(503, CommonErrorCode.Unavailable, 'the service is temporarily unavailable; retry shortly', { 'retry-after': '5' });
    }
    const errorId = randomUUID();
    this.logger.error(
      { msg: 'unhandled error', errorId, reqId: request.id, method: request.method, url: request.url, err: exception },
    );
    const settled = { status: 500, code: this.domains.qualify(CommonErrorCode.Internal, request.url), message: `internal error (id ${errorId})`, errorId };
    return {
      status: 500,
      body: render ? render(settled) : { error: { code: settled.code, message: settled.message, errorId } },
    };
  }
}
