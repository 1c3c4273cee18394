import { type DynamicModule, Module } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LoggerModule, type PinoLogger as NestPinoLogger } from 'nestjs-pino';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import type { AppConfig } from '../config/app-config.js';

/** Query parameters that carry a credential: the signature of a signed media link, presigned S3 links, tokens. */
const SECRET_QUERY_PARAMS = /^(sig|signature|token|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

/** The URL as logged: the path and the query, with credential values replaced (a signed link is a bearer credential). */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const name = decodeURIComponentSafe(pair.split('=', 1)[0] ?? '');
      return SECRET_QUERY_PARAMS.test(name) ? `${pair.split('=', 1)[0]}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, at)}?${query}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Header values never logged: API keys and the admin token (authorization), cookies (the queue
 * dashboard's session), webhook signatures we send, and the Standard Webhooks signature of callbacks.
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
];

export interface LoggingOptions {
  /** Where lines go: stdout for the service, stderr for the CLI (its stdout is the command's JSON), a stream in tests. */
  destination?: DestinationStream;
  /** Overrides LOG_LEVEL (the CLI is quiet unless --verbose). */
  level?: string;
}

/** One pino logger per process: JSON lines unless LOG_PRETTY, at LOG_LEVEL, with the role on every line. */
export function createRootLogger(config: AppConfig, options: LoggingOptions = {}): PinoLogger {
  const settings = {
    level: options.level ?? config.env.LOG_LEVEL,
    base: { role: config.env.APP_ROLE },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (options.destination) return pino(settings, options.destination);
  // pino-pretty is a development dependency: LOG_PRETTY is for a developer's terminal.
  if (config.env.LOG_PRETTY) return pino({ ...settings, transport: { target: 'pino-pretty', options: { singleLine: true, destination: 1 } } });
  return pino(settings);
}

/**
 * nestjs-pino over the process's root logger: every line logged while a request is served carries
 * its `reqId` (Nest's `Logger` reads the request's child logger from nestjs-pino's
 * AsyncLocalStorage), and every line of a queue job carries the job's ids (QueueLifecycle runs each
 * job in a context of its own). The module's own per-request middleware (pino-http through
 * @fastify/middie) is not mounted: `logRequests` does the same with two Fastify hooks, for less
 * work per request (issue 17, docs/benchmarks.md › Text › Optimisation 8).
 */
@Module({})
export class LoggingModule {
  static forRoot(logger: PinoLogger): DynamicModule {
    return {
      module: LoggingModule,
      global: true,
      imports: [LoggerModule.forRoot({ forRoutes: [], pinoHttp: { logger } })],
      exports: [LoggerModule],
    };
  }
}

/** The request as logged: its id, method and URL, credentials redacted. */
const loggedRequest = (request: FastifyRequest) => ({ id: request.id, method: request.method, url: redactUrl(request.raw.url ?? request.url) });

/**
 * Per-request logging (what pino-http did as Nest middleware): each request is served inside a
 * logging context whose logger carries its `reqId`, so every line logged meanwhile has it; once
 * the response is closed (sent whole, or the client gone), one line: `request completed` at info,
 * or `request errored` at error for a 5xx, with the request (URL credentials redacted), the status
 * and the time taken in ms. At a level that drops it, the line is not even built.
 */
export function logRequests(fastify: FastifyInstance, contexts: NestPinoLogger, logger: PinoLogger): void {
  fastify.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const started = Date.now();
    reply.raw.once('close', () => {
      const statusCode = reply.raw.statusCode;
      const level = statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const line: Record<string, unknown> = { reqId: request.id, req: loggedRequest(request), res: { statusCode }, responseTime: Date.now() - started };
      if (level === 'error') {
        line.err = new Error(`failed with status code ${statusCode}`);
        logger.error(line, 'request errored');
      } else logger.info(line, 'request completed');
    });
    contexts.runInContext(() => done(), { bindings: { reqId: request.id } });
  });
}
