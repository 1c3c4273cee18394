import { setTimeout as sleep } from 'node:timers/promises';

/**
 * SQLSTATEs of a lost or refused connection: class 08 (connection exception), and the server
 * ending a backend (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now).
 */
const CONNECTION_SQLSTATE = /^(08...|57P0[123])$/;
/** Socket errors of node:net under pg. */
const CONNECTION_ERRNO = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** What pg and pg-pool throw, without a code, when a connection ends or cannot be had. */
const CONNECTION_MESSAGE = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Client was closed and is not queryable/i;

/**
 * Whether an error means the database connection was lost or could not be made (the statement
 * may or may not have committed), as opposed to an error of the statement itself. TypeORM's
 * QueryFailedError copies the driver error's fields and keeps it as `driverError`.
 */
export function isConnectionError(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const { code, message, driverError, cause } = e as { code?: unknown; message?: unknown; driverError?: unknown; cause?: unknown };
    if (typeof code === 'string' && (CONNECTION_SQLSTATE.test(code) || CONNECTION_ERRNO.has(code))) return true;
    if (typeof message === 'string' && CONNECTION_MESSAGE.test(message)) return true;
    e = driverError ?? cause;
  }
  return false;
}

/**
 * Backoff between tries after a lost connection: twelve tries over about 6.5 s, enough to ride
 * out a failover or backends killed every quarter second (each try can lose its connection
 * again), short enough for a client waiting on its answer.
 */
export const CONNECTION_RETRY_DELAYS_MS: readonly number[] = [20, 50, 100, 200, 400, 700, 1000, 1000, 1000, 1000, 1000];

export interface ConnectionRetryOptions {
  delaysMs?: readonly number[];
  /** Called before each new try with the error of the last one (e.g. to record an intent once). */
  beforeRetry?: (error: unknown, attempt: number) => Promise<void> | void;
}

/**
 * Runs an idempotent database operation, trying again after a lost connection with a short
 * bounded backoff. Any other error, or the last connection error, is thrown.
 */
export async function retryOnConnectionError<T>(operation: () => Promise<T>, options: ConnectionRetryOptions = {}): Promise<T> {
  const delays = options.delaysMs ?? CONNECTION_RETRY_DELAYS_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (!isConnectionError(error) || attempt >= delays.length) throw error;
      await options.beforeRetry?.(error, attempt + 1);
      await sleep(delays[attempt]!);
    }
  }
}
