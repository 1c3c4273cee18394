/**
 * `promise`, or a rejection naming `what` once `ms` have passed without it settling. For calls to
 * a dependency (Redis) whose client queues commands while it reconnects: a caller that must answer
 * in bounded time stops waiting; the command itself is not cancelled.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
