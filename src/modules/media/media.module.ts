import { Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../../config/app-config.js';
import { PeriodicTasks } from '../../queue/periodic-tasks.js';
import { LocalDiskMediaStorage } from './local-disk-media-storage.js';
import { MediaController } from './media.controller.js';
import { MediaDelivery } from './media-delivery.service.js';
import { MediaLinkSigner } from './media-link-signer.js';
import { MediaObjectEntity } from './media-object.entity.js';
import { MediaObjectRepository } from './media-object.repository.js';
import { MediaService } from './media.service.js';
import { MediaStorage } from './media-storage.js';

/** Media storage, signed links, the media route and retention. Domains that store media import it. */
@Module({
  imports: [TypeOrmModule.forFeature([MediaObjectEntity])],
  controllers: [MediaController],
  providers: [
    { provide: MediaStorage, useFactory: (config: AppConfig) => new LocalDiskMediaStorage(config.mediaDir), inject: [AppConfig] },
    { provide: MediaLinkSigner, useFactory: (config: AppConfig) => new MediaLinkSigner(config.env.MEDIA_SIGNING_KEY), inject: [AppConfig] },
    MediaObjectRepository,
    MediaService,
    MediaDelivery,
  ],
  exports: [MediaService],
})
export class MediaModule implements OnModuleInit {
  constructor(
    private readonly tasks: PeriodicTasks,
    private readonly media: MediaService,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.tasks.register({
      name: 'media-retention',
      intervalMs: this.config.env.MEDIA_SWEEP_INTERVAL_MS,
      run: async () => {
        await this.media.sweepExpired();
      },
    });
  }
}
