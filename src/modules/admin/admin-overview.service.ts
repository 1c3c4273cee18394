import { Injectable } from '@nestjs/common';
import { microsToUsd } from '../../../libs/common/index.js';
import { Queues } from '../../queue/queues.js';
import { RegisteredQueues } from '../../queue/registered-queues.js';
import { WalletService } from '../billing/index.js';
import type { AdminOverviewDto } from './admin.dto.js';
import { AdminTaskListService } from './admin-task-list.service.js';

const HOUR_MS = 3_600_000;

/** GET /admin/v1/overview: what an operator looks at first (the console's home page). */
/** A queue whose counts Redis did not give in time. */
const UNKNOWN_COUNTS = { waiting: null, active: null, delayed: null, prioritized: null, failed: null };

@Injectable()
export class AdminOverviewService {
  constructor(
    private readonly wallets: WalletService,
    private readonly queues: Queues,
    private readonly registered: RegisteredQueues,
    private readonly tasks: AdminTaskListService,
  ) {}

  async overview(now = new Date()): Promise<AdminOverviewDto> {
    const since = new Date(now.getTime() - HOUR_MS);
    const [holds, queues, tasks] = await Promise.all([
      this.wallets.openHolds(),
      Promise.all(
        // Redis away: each count null, and the overview (the console's sign-in) still answers.
        this.registered.list().map(async (name) => ({ name, ...((await this.queues.jobCounts(name)) ?? UNKNOWN_COUNTS) })),
      ),
      this.tasks.countSince(since),
    ]);
    return {
      openHolds: holds.count,
      heldUsd: microsToUsd(holds.micros),
      queues: queues.sort((a, b) => a.name.localeCompare(b.name)),
      since,
      tasksLastHour: tasks.counts,
      tasksCapped: tasks.capped,
      taskKinds: this.tasks.kinds(),
    };
  }
}
