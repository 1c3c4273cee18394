import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../../libs/common/index.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { WalletService } from '../billing/wallet.service.js';
import { MediaService } from '../media/media.service.js';
import { ImageGenerationRepository } from './image-generation.repository.js';
import { IMAGE_ABANDONED_AFTER_MS, IMAGE_SWEEP_INTERVAL_MS } from './images.constants.js';

const SWEEP_BATCH = 200;

/**
 * Periodic task `image-retention`: 24 hours after generation the image is deleted and the row
 * marked (`media_deleted_at`); a generation still `running` long after its request must have
 * ended was left by a process that died mid-request, so it is failed and its hold released (the
 * client got no answer, so nothing is owed).
 */
@Injectable()
export class ImageRetention implements OnModuleInit {
  private readonly logger = new Logger(ImageRetention.name);

  constructor(
    private readonly rows: ImageGenerationRepository,
    private readonly media: MediaService,
    private readonly wallet: WalletService,
    private readonly periodic: PeriodicTasks,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.periodic.register({
      name: 'image-retention',
      intervalMs: IMAGE_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.sweepExpiredMedia();
        await this.failAbandoned();
      },
    });
  }

  /** Deletes every image past its 24 hours; returns how many. */
  async sweepExpiredMedia(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const expired = await this.rows.findExpiredMedia(this.clock.now(), SWEEP_BATCH);
      for (const row of expired) {
        await this.media.delete(row.mediaKey!);
        await this.rows.markMediaDeleted(row.id, this.clock.now());
        deleted++;
      }
      if (expired.length < SWEEP_BATCH) return deleted;
    }
  }

  /** Fails the generations abandoned mid-request and releases their holds; returns how many. */
  async failAbandoned(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - IMAGE_ABANDONED_AFTER_MS);
    let failed = 0;
    for (;;) {
      const abandoned = await this.rows.findAbandoned(cutoff, SWEEP_BATCH);
      for (const row of abandoned) {
        const now = this.clock.now();
        if (await this.rows.finish(row.id, { status: 'failed', failureReason: 'the request ended without an answer', completedAt: now, updatedAt: now })) {
          await this.wallet.release(row.holdId);
          failed++;
        }
      }
      if (abandoned.length < SWEEP_BATCH) break;
    }
    if (failed) this.logger.warn(`failed ${failed} image generations left running by a process that died mid-request`);
    return failed;
  }
}
