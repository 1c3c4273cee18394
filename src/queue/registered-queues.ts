import { Injectable } from '@nestjs/common';
import { MAINTENANCE_QUEUE, type QueueName } from './queue-names.js';

/**
 * The queues this app has, as the modules registered them (`QueueModule.forFeature`): what the
 * `svc_queue_jobs` gauge reports and what QueueLifecycle watches. Filled while the modules are
 * instantiated, so it is complete before any module's `onModuleInit`.
 */
@Injectable()
export class RegisteredQueues {
  private readonly names = new Set<QueueName>([MAINTENANCE_QUEUE]);

  add(names: readonly QueueName[]): void {
    for (const name of names) this.names.add(name);
  }

  list(): QueueName[] {
    return [...this.names];
  }
}
