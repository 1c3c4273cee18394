import type { Logger } from '@nestjs/common';
import type { Clock } from '../../../libs/common/index.js';
import type { AudioTaskRunner } from './audio-task.runner.js';

export interface StreamLease {
  stop(): void;
}

/**
 * Extends a streaming task's lease every third of its length (compare-and-set on `streaming`),
 * so the watchdog job leaves it alone while this process lives. Stops by itself once a worker took
 * the task over; a failed renewal (database blink) is retried at the next tick, two before the end.
 */
export function keepStreamLease(input: { runner: AudioTaskRunner; taskId: string; leaseMs: number; clock: Clock; logger: Logger }): StreamLease {
  let renewing = false;
  const renew = async (): Promise<void> => {
    if (renewing) return;
    renewing = true;
    try {
      const kept = await input.runner.extendLease(input.taskId, new Date(input.clock.now().getTime() + input.leaseMs));
      if (!kept) clearInterval(timer);
    } catch (error) {
      input.logger.warn(`task ${input.taskId}: lease renewal failed, retrying at the next tick: ${String(error)}`);
    } finally {
      renewing = false;
    }
  };
  const timer = setInterval(() => void renew(), Math.max(100, Math.floor(input.leaseMs / 3)));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
