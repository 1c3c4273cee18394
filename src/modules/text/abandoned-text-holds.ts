import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { WalletService } from '../billing/wallet.service.js';
import { TEXT_HOLD_SUBJECT } from './text.constants.js';

/**
 * A text hold is settled or released before its request ends; one still open this long after
 * was left by a process that died mid-request (a kill, an out-of-memory crash). No request lives
 * this long: the upstream's idle timeouts end a stalled call within minutes.
 */
export const ABANDONED_TEXT_HOLD_MS = 2 * 3600_000;
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * Releases abandoned text holds, so a crash never leaves a client's money held for good. The
 * client got no answer from the dead process, so nothing is charged (as for any failure before
 * an answer). A request that somehow outlived the window and settles later finds its hold
 * released and changes nothing (settling a resolved hold is a no-op). The wallet does the
 * releasing; text owns only the window and the schedule.
 */
@Injectable()
export class AbandonedTextHolds implements OnModuleInit {
  private readonly logger = new Logger(AbandonedTextHolds.name);

  constructor(
    private readonly wallet: WalletService,
    private readonly periodic: PeriodicTasks,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.periodic.register({
      name: 'text-abandoned-holds',
      intervalMs: SWEEP_INTERVAL_MS,
      run: async () => {
        await this.releaseAbandoned();
      },
    });
  }

  /** Releases the text holds open for longer than ABANDONED_TEXT_HOLD_MS; returns how many. */
  async releaseAbandoned(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - ABANDONED_TEXT_HOLD_MS);
    const released = await this.wallet.releaseAbandoned(TEXT_HOLD_SUBJECT, cutoff);
    if (released > 0) this.logger.warn(`released ${released} text holds left open by a process that died mid-request`);
    return released;
  }
}
