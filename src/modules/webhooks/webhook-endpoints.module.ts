import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentityModule } from '../identity/identity.module.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { WebhookEndpointRepository } from './webhook-endpoint.repository.js';
import { WebhookEndpointCommands } from './webhook-endpoint-commands.js';
import { WebhookEndpointsController } from './webhook-endpoints.controller.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { WebhookSecrets } from './webhook-secrets.js';

/**
 * Webhook endpoints: the table, the sealed secrets, the CRUD routes, and WebhookEndpointsService,
 * the facade the delivery side and audio's endpoint check use (import this module for it).
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookEndpointEntity]), IdentityModule],
  controllers: [WebhookEndpointsController],
  providers: [WebhookEndpointRepository, WebhookSecrets, WebhookEndpointsService, WebhookEndpointCommands],
  exports: [WebhookEndpointsService],
})
export class WebhookEndpointsModule {}
