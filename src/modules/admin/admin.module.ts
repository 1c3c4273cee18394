import { Global, Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module.js';
import { IdentityModule } from '../identity/identity.module.js';
import { AdminTaskListService } from './admin-task-list.service.js';
import { AdminController } from './admin.controller.js';
import { AdminService } from './admin.service.js';
import { DemoSeeder } from './demo-seeder.js';
import { AdminTaskDirectory } from './task-directory.js';

@Global()
@Module({
  imports: [IdentityModule, BillingModule],
  controllers: [AdminController],
  providers: [DemoSeeder, AdminTaskDirectory, AdminService, AdminTaskListService],
  exports: [DemoSeeder, AdminTaskDirectory, AdminService],
})
export class AdminModule {}
