import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { AdminModule } from '../admin/index.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { ImageAdaptersModule } from './image-adapters.module.js';
import { ImageGenerationEntity } from './image-generation.entity.js';
import { ImageGenerationRepository } from './image-generation.repository.js';
import { ImageGenerationService } from './image-generation.service.js';
import { ImageMetrics } from './image-metrics.js';
import { ImageReferenceLoader } from './image-references.js';
import { ImageRetention } from './image-retention.js';
import { ImageWorkSources } from './image-work-sources.js';
import { ImagesController } from './images.controller.js';
import { IMAGE_ROUTE_PREFIX } from './images.constants.js';

/**
 * Synchronous image generation: the route, references, money, the stored image and its public
 * link, retention, the admin task list and metrics. The adapters live in ImageAdaptersModule,
 * found through the provider registry.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([ImageGenerationEntity]),
    ErrorDomainsModule.forFeature({ domain: 'image', pathPrefixes: [IMAGE_ROUTE_PREFIX] }),
    BillingModule,
    IdentityModule,
    ProvidersModule,
    AdminModule,
    ImageAdaptersModule,
  ],
  controllers: [ImagesController],
  providers: [ImageGenerationRepository, ImageGenerationService, ImageReferenceLoader, ImageMetrics, ImageRetention, ImageWorkSources],
  exports: [ImageGenerationService],
})
export class ImagesModule {}
