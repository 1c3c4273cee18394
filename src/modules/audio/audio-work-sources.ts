import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AUDIO_PROCESS_JOB, AUDIO_QUEUE } from './audio-jobs.js';
import { WorkReconciler } from '../../queue/work-reconciler.js';
import { AdminTaskDirectory, toAdminTaskSummary } from '../admin/index.js';
import { AUDIO_JOB_OPTIONS, audioJobId } from './audio.constants.js';
import type { AudioTaskStatus } from './audio-task.entity.js';
import { AudioTaskRepository } from './audio-task.repository.js';

const STATUSES: readonly string[] = ['queued', 'processing', 'succeeded', 'failed', 'cancelled'];

/**
 * What audio registers with the platform: the reconciler source (every unfinished task whose job
 * Redis lost is enqueued again, with its deterministic job id) and the admin task list (`kind=audio`).
 */
@Injectable()
export class AudioWorkSources implements OnModuleInit {
  constructor(
    private readonly tasks: AudioTaskRepository,
    private readonly reconciler: WorkReconciler,
    private readonly directory: AdminTaskDirectory,
  ) {}

  onModuleInit(): void {
    this.reconciler.register({
      name: 'audio',
      findPending: async () =>
        (await this.tasks.pendingIds()).map((taskId) => ({
          queue: AUDIO_QUEUE,
          jobName: AUDIO_PROCESS_JOB,
          jobId: audioJobId(taskId),
          data: { taskId },
          options: AUDIO_JOB_OPTIONS,
        })),
    });

    this.directory.register({
      kind: 'audio',
      list: async (filter) => {
        // Another kind's status (`running`) matches no audio task.
        if (filter.status !== undefined && !STATUSES.includes(filter.status)) return [];
        const rows = await this.tasks.listAll({ limit: filter.limit, after: filter.after, status: filter.status as AudioTaskStatus | undefined, workspaceId: filter.workspaceId });
        return rows.map((task) => toAdminTaskSummary('audio', task));
      },
      get: async (id) => {
        const task = id.startsWith('audio:') ? await this.tasks.findById(id) : null;
        return task ? toAdminTaskSummary('audio', task) : null;
      },
    });
  }
}
