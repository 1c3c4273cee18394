import type { Logger } from '@nestjs/common';

interface ErrorSource {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** One report a minute per source is enough to see an outage; the rest are only counted. */
const QUIET_MS = 60_000;

/**
 * Logs the errors a Redis client, BullMQ queue or worker emits — mostly failed reconnects while
 * Redis is down — at most once a minute per source, with how many were left out. ioredis
 * reconnects by itself; without a listener, ioredis and BullMQ print every failed attempt of
 * every connection to stderr (a stack trace a second each, outside the JSON log).
 */
export function logErrorsQuietly(source: ErrorSource, name: string, logger: Logger): void {
  let lastReportAt = -Infinity;
  let unreported = 0;
  source.on('error', (error) => {
    const now = Date.now();
    if (now - lastReportAt < QUIET_MS) {
      unreported++;
      return;
    }
    const left = unreported > 0 ? ` (and ${unreported} more errors since the last report)` : '';
    logger.warn(`${name}: ${error.message}${left}`);
    lastReportAt = now;
    unreported = 0;
  });
}
