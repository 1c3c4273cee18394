import type { LoggerService } from '@nestjs/common';
import { pino, type Logger as PinoLogger } from 'pino';
import type { AppConfig } from '../config/app-config.js';

/** One pino logger per app: Fastify logs requests with it, Nest logs through NestPinoLogger. */
export function createRootLogger(config: AppConfig): PinoLogger {
  return pino({
    level: config.env.LOG_LEVEL,
    base: { role: config.env.APP_ROLE },
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], censor: '[redacted]' },
    ...(config.env.LOG_PRETTY ? { transport: { target: 'pino-pretty', options: { singleLine: true } } } : {}),
  });
}

/** Nest's LoggerService on top of pino, so framework and app logs share one structured stream. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly root: PinoLogger) {}

  log(message: unknown, context?: string): void {
    this.write('info', message, context);
  }
  error(message: unknown, traceOrContext?: string, context?: string): void {
    const ctx = context ?? traceOrContext;
    if (message instanceof Error) this.root.error({ context: ctx, err: message }, message.message);
    else this.write('error', message, ctx, context ? traceOrContext : undefined);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, context?: string, stack?: string): void {
    if (typeof message === 'object' && message !== null) this.root[level]({ context, ...message, stack });
    else this.root[level]({ context, stack }, String(message));
  }
}
