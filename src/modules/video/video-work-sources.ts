import { Injectable, type OnModuleInit } from '@nestjs/common';
import { WorkReconciler } from '../../queue/work-reconciler.js';
import { AdminTaskDirectory, toAdminTaskSummary } from '../admin/index.js';
import { VideoTaskRepository } from './video-task.repository.js';
import { VIDEO_JOB_OPTIONS, VIDEO_PROCESS_JOB, VIDEO_QUEUE, videoJobId } from './video-jobs.js';

/**
 * What video registers with the platform so its tasks are never lost and are visible to
 * operators: the reconciler source (every unfinished task whose job Redis lost is enqueued
 * again, with its deterministic job id) and the admin task list (`kind=video`).
 */
@Injectable()
export class VideoWorkSources implements OnModuleInit {
  constructor(
    private readonly tasks: VideoTaskRepository,
    private readonly reconciler: WorkReconciler,
    private readonly directory: AdminTaskDirectory,
  ) {}

  onModuleInit(): void {
    this.reconciler.register({
      name: 'video',
      findPending: async () =>
        (await this.tasks.pendingIds()).map((taskId) => ({
          queue: VIDEO_QUEUE,
          jobName: VIDEO_PROCESS_JOB,
          jobId: videoJobId(taskId),
          data: { taskId },
          options: VIDEO_JOB_OPTIONS,
        })),
    });

    this.directory.register({
      kind: 'video',
      list: async (filter) =>
        (await this.tasks.listAll({ limit: filter.limit, after: filter.after, status: filter.status as never, workspaceId: filter.workspaceId })).map((task) =>
          toAdminTaskSummary('video', task),
        ),
      get: async (id) => {
        const task = id.startsWith('omni:') ? await this.tasks.findById(id) : null;
        return task ? toAdminTaskSummary('video', task) : null;
      },
    });
  }
}
