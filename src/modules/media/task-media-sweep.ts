import type { Clock } from '../../../libs/common/index.js';
import type { PeriodicTask } from '../../queue/periodic-tasks.js';
import type { MediaService } from './media.service.js';

/** Expired task media looked at per query of the sweep. */
const SWEEP_BATCH = 200;

/** The queries a domain's task table answers for its media retention. */
export interface ExpiredTaskMediaRows {
  /** Finished tasks whose retention has ended and whose media is still stored, oldest deadline first. */
  findExpiredMedia(now: Date, limit: number): Promise<Array<{ id: string; mediaKey: string | null }>>;
  markMediaDeleted(id: string, at: Date): Promise<void>;
}

/**
 * Deletes the stored media of every task past its retention and marks the task so it shows no
 * outputs (the row stays); video and audio each run one over their own table.
 */
export class TaskMediaSweep {
  constructor(
    private readonly rows: ExpiredTaskMediaRows,
    private readonly media: MediaService,
    private readonly clock: Clock,
  ) {}

  /** The sweep as the periodic task `name`, for `PeriodicTasks.register`. */
  periodicTask(name: string, intervalMs: number): PeriodicTask {
    return {
      name,
      intervalMs,
      run: async () => {
        await this.run();
      },
    };
  }

  /** Deletes every file past its retention; returns how many. */
  async run(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const expired = await this.rows.findExpiredMedia(this.clock.now(), SWEEP_BATCH);
      for (const task of expired) {
        await this.media.delete(task.mediaKey!);
        await this.rows.markMediaDeleted(task.id, this.clock.now());
        deleted++;
      }
      if (expired.length < SWEEP_BATCH) return deleted;
    }
  }
}
