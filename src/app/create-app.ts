import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { type FastifyError, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Logger, PinoLogger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { CommonErrorCode, DomainError, ErrorDomains, RequestErrorCode } from '../../libs/common/index.js';
import { AppModule, type AppModuleOptions } from '../app.module.js';
import type { AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.service.js';
import { mountAdminConsole } from './admin-console.js';
import { answerClientError } from './client-error.js';
import { HttpExceptionFilter } from './http-exception.filter.js';
import { jsonShapeProblem } from './json-depth.js';
import { applyHeapGrowth } from './heap-growth.js';
import { createRootLogger, logRequests } from './logger.js';
import { setupOpenApi } from './openapi.js';
import { mountQueueDashboard } from './queue-dashboard.js';
import { StrictValidationPipe } from './validation.pipe.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A connection's `error` is the client's fault (a frame over REALTIME_MAX_FRAME_BYTES, a
 * malformed frame: `ws` closes it with 1009 or 1002): a warning, not an error line for
 * operators to chase. The server's own errors stay errors.
 */
class ClientFaultsWsAdapter extends WsAdapter {
  override bindErrorHandler(server: { on(event: string, listener: (arg: any) => void): void }): unknown {
    server.on('connection', (socket: { on(event: 'error', listener: (error: Error) => void): void }) =>
      socket.on('error', (error) => this.logger.warn(`a realtime client broke the protocol: ${error.message}`)),
    );
    server.on('error', (error: Error) => this.logger.error(error));
    return server;
  }
}

/** Whether `text` is JSON at all (whatever keys it holds). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds the application (not yet listening). main.ts and every end-to-end test boot through
 * here, so tests exercise exactly the production wiring.
 */
export async function createApp(config: AppConfig, options: AppModuleOptions & { logDestination?: DestinationStream } = {}): Promise<NestFastifyApplication> {
  applyHeapGrowth(config.env.HEAP_GROWING_PERCENT);
  const logger = options.logger ?? createRootLogger(config, { destination: options.logDestination });
  // Filled by the modules as they are built (ErrorDomainsModule.forFeature), read by the filter.
  const errorDomains = new ErrorDomains();
  const filter = new HttpExceptionFilter(errorDomains);
  const requestTimeout = config.env.REQUEST_TIMEOUT_MS;
  const adapter = new FastifyAdapter({
    // Fastify logs its own faults with the root logger; requests are logged once, by logRequests (logger.ts).
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.env.BODY_LIMIT_BYTES,
    // A client's x-request-id is kept when it is sane, so logs line up across services.
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    trustProxy: true,
    routerOptions: { ignoreTrailingSlash: true },
    // The whole request (headers and body) must arrive in time; the response is not limited.
    requestTimeout,
    http: {
      // Node's default header timeout, kept within the request timeout.
      headersTimeout: Math.min(60_000, requestTimeout),
      // Node looks for expired requests at this interval: a tenth keeps the overshoot at 10%.
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(requestTimeout / 10)),
    },
    // Errors raised before a request exists (timeouts, oversized or unparsable requests)
    // and the router's refusals (bad URL, over-long path parameter) answer in our envelope too.
    clientErrorHandler: answerClientError,
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      void reply.header('x-request-id', request.id);
      filter.send(error, request, reply);
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.create(config, { ...options, errorDomains, logger }), adapter, {
    bufferLogs: true,
    abortOnError: false,
    // JSON only: Nest would add a form parser, Fastify has a text/plain one; anything else is 415.
    bodyParser: false,
  });

  app.useLogger(app.get(Logger));
  // The realtime gateway (raw `ws`) shares the HTTP server and port. Its frames are `{type, …}`, read
  // by the gateway itself: Nest's `{event, data}` dispatch is given nothing to parse.
  app.useWebSocketAdapter(new ClientFaultsWsAdapter(app, { messageParser: () => undefined }));
  app.useGlobalFilters(filter);
  app.useGlobalPipes(new StrictValidationPipe());
  app.enableShutdownHooks();

  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  // JSON nesting and size are measured on the raw text before anything walks it recursively (a
  // deep body overflowed the stack of the validation pipe) or JSON.parse blocks the event loop
  // on millions of tiny values; then Fastify's own safe parser.
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  const { REQUEST_MAX_DEPTH: maxDepth, REQUEST_MAX_ITEMS: maxItems } = config.env;
  // The raw bytes: JSON is UTF-8 (RFC 8259), and bytes that are not would be decoded to U+FFFD
  // and taken (spoken, translated, charged) as if the client had sent them.
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer; // parseAs: 'buffer'
    // An empty body is no body: clients that always send the JSON content type (DELETE, or a POST
    // that takes none) are not refused; a route that needs a body says so.
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(bytes)) {
      done(new DomainError(400, RequestErrorCode.InvalidJson, 'request body is not valid UTF-8'), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    // Routes marked @RouteConfig({ rawBody: true }) get the exact text (signatures are computed over it).
    if ((request.routeOptions.config as { rawBody?: boolean } | undefined)?.rawBody === true) {
      done(null, text);
      return;
    }
    const problem = jsonShapeProblem(text, maxDepth, maxItems);
    if (problem === 'too_deep') {
      done(new DomainError(400, RequestErrorCode.TooDeep, `request body nests objects and arrays deeper than ${maxDepth} levels`), undefined);
    } else if (problem === 'too_many_items') {
      done(new DomainError(400, RequestErrorCode.TooManyItems, `request body holds more than ${maxItems} JSON items (objects, arrays, elements)`), undefined);
    } else {
      void parseJson(request, text, (error, value) => {
        // The safe parser also refuses valid JSON with a `__proto__` key (or `constructor` holding
        // `prototype`): that is a field no body has, not malformed JSON. Checked on refusals only.
        if (error && isJson(text)) done(new DomainError(400, CommonErrorCode.UnknownField, 'request body has a key that no request takes: __proto__, or constructor.prototype'), undefined);
        else done(error, value);
      });
    }
  });
  // Routes marked @RouteConfig({ bodyLimit: 'text' }) take inline media: their own, larger limit.
  // The alternate creation route takes Base64 images: the same larger limit.
  fastify.addHook('onRoute', (route) => {
    const limit = (route.config as { bodyLimit?: string | number } | undefined)?.bodyLimit;
    if (limit === 'text') route.bodyLimit = config.env.TEXT_BODY_LIMIT_BYTES;
    // A route may also set its own, smaller limit (the internal callbacks: a few KiB).
    else if (typeof limit === 'number') route.bodyLimit = limit;
  });
  const metrics = app.get(Metrics);
  logRequests(fastify, await app.resolve(PinoLogger), logger);
  // Callback hooks, not async ones: no promise per request.
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    void reply.header('x-request-id', request.id);
    done();
  });
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  setupOpenApi(app);
  await mountQueueDashboard(app, config);
  await mountAdminConsole(app);
  return app;
}
