import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
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

/** Nest's request-id bridge: the id Fastify chose (a sane client `x-request-id`, else a UUID) rides on the raw request. */
const REQUEST_ID_KEY = Symbol('svc.requestId');
type WithRequestId = IncomingMessage & { [REQUEST_ID_KEY]?: string };

export function tagRequestId(request: IncomingMessage, id: string): string {
  (request as WithRequestId)[REQUEST_ID_KEY] = id;
  return id;
}

/**
 * nestjs-pino over the process's root logger: every line logged while a request is served carries
 * its `reqId` (pino-http binds a child logger in AsyncLocalStorage; Nest's `Logger` reads it), and
 * every line of a queue job carries the job's ids (QueueLifecycle runs each job in a context of
 * its own). Requests are logged once, on completion, with the URL's credentials redacted.
 */
@Module({})
export class LoggingModule {
  static forRoot(logger: PinoLogger): DynamicModule {
    return {
      module: LoggingModule,
      global: true,
      imports: [
        LoggerModule.forRoot({
          // Every path. nestjs-pino's default (`{/*splat}`) reaches @fastify/middie unconverted and
          // matches nothing there; `*` is converted by Nest's Fastify adapter (`/{*path}`).
          forRoutes: [{ path: '*', method: RequestMethod.ALL }],
          pinoHttp: {
            logger,
            genReqId: (request: IncomingMessage) => (request as WithRequestId)[REQUEST_ID_KEY] ?? 'none',
            customAttributeKeys: { reqId: 'reqId' },
            quietReqLogger: true,
            serializers: {
              req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactUrl(req.url) }),
              res: (res: ServerResponse & { statusCode: number }) => ({ statusCode: res.statusCode }),
            },
            customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
          },
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
