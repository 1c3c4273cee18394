import { Module } from '@nestjs/common';
import { ErrorDomainsModule } from '../../app/error-domains.module.js';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { AdminOverviewService } from './admin-overview.service.js';
import { AdminTaskListService } from './admin-task-list.service.js';
import { AdminController } from './admin.controller.js';
import { AdminService } from './admin.service.js';
import { DemoSeeder } from './demo-seeder.js';
import { AdminTaskDirectory } from './task-directory.js';
import { AdminTaskMetrics } from './task-metrics.js';
import { AdminWebhookDeliveryDirectory } from './webhook-delivery-directory.js';

/** The admin API, the demo seed, and the task directory each task domain registers its tasks in (import this module to register). */
@Module({
  imports: [IdentityModule, BillingModule, ErrorDomainsModule.forFeature({ domain: 'admin', pathPrefixes: ['/admin/'] })],
  controllers: [AdminController],
  providers: [DemoSeeder, AdminTaskDirectory, AdminWebhookDeliveryDirectory, AdminService, AdminTaskListService, AdminOverviewService, AdminTaskMetrics],
  exports: [DemoSeeder, AdminTaskDirectory, AdminWebhookDeliveryDirectory, AdminService],
})
export class AdminModule {}
