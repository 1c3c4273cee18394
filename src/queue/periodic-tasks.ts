import { Injectable } from '@nestjs/common';

/** Work a module wants run every `intervalMs` on some worker (one run at a time cluster-wide). */
export interface PeriodicTask {
  name: string;
  intervalMs: number;
  /** Also run once when a worker boots (the reconciler does). */
  runOnBoot?: boolean;
  run(): Promise<void>;
}

/**
 * Modules register their periodic tasks here in `onModuleInit`; the maintenance queue turns each
 * into a BullMQ job scheduler, so with several workers each run happens once.
 */
@Injectable()
export class PeriodicTasks {
  private readonly tasks = new Map<string, PeriodicTask>();

  register(task: PeriodicTask): void {
    if (this.tasks.has(task.name)) throw new Error(`periodic task "${task.name}" registered twice`);
    this.tasks.set(task.name, task);
  }

  get(name: string): PeriodicTask | undefined {
    return this.tasks.get(name);
  }

  all(): PeriodicTask[] {
    return [...this.tasks.values()];
  }
}
