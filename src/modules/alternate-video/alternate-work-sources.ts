import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { WorkReconciler } from '../../queue/work-reconciler.js';
import { AdminTaskDirectory, toAdminTaskSummary } from '../admin/index.js';
import { MediaService, TaskMediaSweep } from '../media/index.js';
import { ALTERNATE_JOB_OPTIONS, ALTERNATE_PROCESS_JOB, ALTERNATE_QUEUE, alternateJobId } from './alternate-jobs.js';
import { AlternateTaskRepository } from './alternate-task.repository.js';

/** Applied callback ids are kept a day: far longer than the five minutes a signature is valid. */
const CALLBACK_ID_RETENTION_MS = 24 * 3600 * 1000;

/**
 * What the alternate provider registers with the platform: the reconciler source (an unfinished
 * task whose job Redis lost is enqueued again), the admin task list (`kind=alternate`), the media
 * retention sweep (seven days, through the shared TaskMediaSweep) and the forgetting of old
 * callback ids.
 */
@Injectable()
export class AlternateWorkSources implements OnModuleInit {
  private readonly sweep: TaskMediaSweep;

  constructor(
    private readonly tasks: AlternateTaskRepository,
    private readonly reconciler: WorkReconciler,
    private readonly directory: AdminTaskDirectory,
    private readonly periodic: PeriodicTasks,
    private readonly config: AppConfig,
    private readonly clock: Clock,
    media: MediaService,
  ) {
    this.sweep = new TaskMediaSweep(tasks, media, clock);
  }

  onModuleInit(): void {
    this.reconciler.register({
      name: 'alternate-video',
      findPending: async () =>
        (await this.tasks.pendingIds()).map((taskId) => ({
          queue: ALTERNATE_QUEUE,
          jobName: ALTERNATE_PROCESS_JOB,
          jobId: alternateJobId(taskId),
          data: { taskId },
          options: ALTERNATE_JOB_OPTIONS,
        })),
    });
    this.directory.register({
      kind: 'alternate',
      list: async (filter) =>
        (await this.tasks.listAll({ limit: filter.limit, after: filter.after, status: filter.status as never, workspaceId: filter.workspaceId })).map((task) =>
          toAdminTaskSummary('alternate', task),
        ),
      get: async (id) => {
        const task = id.startsWith('alt:') ? await this.tasks.findById(id) : null;
        return task ? toAdminTaskSummary('alternate', task) : null;
      },
    });
    this.periodic.register(this.sweep.periodicTask('alternate-retention', this.config.env.MEDIA_SWEEP_INTERVAL_MS));
    this.periodic.register({
      name: 'alternate-callback-ids',
      intervalMs: 3600_000,
      run: async () => {
        await this.tasks.forgetCallbacks(new Date(this.clock.now().getTime() - CALLBACK_ID_RETENTION_MS));
      },
    });
  }

  /** Deletes every video past its retention; returns how many. */
  sweepExpiredMedia(): Promise<number> {
    return this.sweep.run();
  }
}
