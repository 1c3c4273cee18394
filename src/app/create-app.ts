import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AppModule, type AppModuleOptions } from '../app.module.js';
import type { AppConfig } from '../config/app-config.js';
import { Metrics } from '../modules/health/metrics.service.js';
import { HttpExceptionFilter } from './http-exception.filter.js';
import { createRootLogger, NestPinoLogger } from './logger.js';
import { setupOpenApi } from './openapi.js';
import { StrictValidationPipe } from './validation.pipe.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Builds the application (not yet listening). main.ts and every end-to-end test boot through
 * here, so tests exercise exactly the production wiring.
 */
export async function createApp(config: AppConfig, options: AppModuleOptions = {}): Promise<NestFastifyApplication> {
  const logger = createRootLogger(config);
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    bodyLimit: config.env.BODY_LIMIT_BYTES,
    // A client's x-request-id is kept when it is sane, so logs line up across services.
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    trustProxy: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.create(config, options), adapter, {
    logger: new NestPinoLogger(logger),
    bufferLogs: false,
    abortOnError: false,
    // JSON only: Nest would add a form parser, Fastify has a text/plain one; anything else is 415.
    bodyParser: false,
  });

  const filter = new HttpExceptionFilter();
  app.useGlobalFilters(filter);
  app.useGlobalPipes(new StrictValidationPipe());
  app.enableShutdownHooks();

  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeContentTypeParser('text/plain');
  // Routes marked @RouteConfig({ bodyLimit: 'text' }) take inline media: their own, larger limit.
  fastify.addHook('onRoute', (route) => {
    if ((route.config as { bodyLimit?: string } | undefined)?.bodyLimit === 'text') route.bodyLimit = config.env.TEXT_BODY_LIMIT_BYTES;
  });
  const metrics = app.get(Metrics);
  fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    void reply.header('x-request-id', request.id);
  });
  fastify.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  setupOpenApi(app);
  return app;
}
