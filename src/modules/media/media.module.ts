import { type DynamicModule, type FactoryProvider, Global, Module, type OnModuleInit, type Provider, type Type, type ValueProvider } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
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

export interface MediaModuleOptions {
  /**
   * A MediaStorage of your own in place of the configured driver (MEDIA_DRIVER): a class built by
   * DI (it may inject AppConfig or any global provider), a `useFactory` with its `inject`, or a
   * ready `useValue`. It must pass the contract suite in `media-storage.contract.ts`.
   */
  storage?: Type<MediaStorage> | Omit<FactoryProvider<MediaStorage>, 'provide'> | Omit<ValueProvider<MediaStorage>, 'provide'>;
}

/**
 * The driver MEDIA_DRIVER names, from the validated configuration. The S3 driver is imported only
 * when configured: the AWS SDK costs about 20 MB of resident memory in every process that loads it.
 */
async function configuredStorage(config: AppConfig): Promise<MediaStorage> {
  const env = config.env;
  if (env.MEDIA_DRIVER === 'local') return new LocalDiskMediaStorage(config.mediaDir);
  const { S3MediaStorage } = await import('./s3-media-storage.js');
  return new S3MediaStorage({
    bucket: env.MEDIA_S3_BUCKET!,
    region: env.MEDIA_S3_REGION,
    endpoint: env.MEDIA_S3_ENDPOINT,
    forcePathStyle: env.MEDIA_S3_FORCE_PATH_STYLE,
    credentials: env.MEDIA_S3_ACCESS_KEY_ID ? { accessKeyId: env.MEDIA_S3_ACCESS_KEY_ID, secretAccessKey: env.MEDIA_S3_SECRET_ACCESS_KEY! } : undefined,
    keyPrefix: env.MEDIA_S3_KEY_PREFIX,
    presignedLinks: env.MEDIA_S3_PRESIGNED_LINKS,
    publicEndpoint: env.MEDIA_S3_PUBLIC_ENDPOINT,
  });
}

function storageProvider(storage: MediaModuleOptions['storage']): Provider {
  if (!storage) return { provide: MediaStorage, useFactory: configuredStorage, inject: [AppConfig] };
  if (typeof storage === 'function') return { provide: MediaStorage, useClass: storage };
  return { ...storage, provide: MediaStorage } as Provider;
}

/**
 * Media storage, signed links, the media route and retention. Global, like config: the storage
 * driver is chosen once, at the root (`MediaModule.forRoot(options)`), and every domain that
 * stores media uses that one MediaService (a static import elsewhere would make a second,
 * driverless instance).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([MediaObjectEntity]), ErrorDomainsModule.forFeature({ domain: 'media', pathPrefixes: ['/media/'] })],
  controllers: [MediaController],
  providers: [
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

  /** The module with its storage: the configured driver, or `options.storage`. */
  static forRoot(options: MediaModuleOptions = {}): DynamicModule {
    return { module: MediaModule, providers: [storageProvider(options.storage)] };
  }

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
