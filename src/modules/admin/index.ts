// Admin's public surface: what other modules may import (docs/architecture.md › Module boundaries).
export { AdminModule } from './admin.module.js';
export { AdminService } from './admin.service.js';
export * from './admin.dto.js';
export { DemoSeeder } from './demo-seeder.js';
export { AdminTaskDirectory, type AdminTaskFilter, type AdminTaskSource, type AdminTaskSummary } from './task-directory.js';
export {
  type AdminDeliveryRetryOutcome,
  type AdminWebhookDeliveryAttempt,
  AdminWebhookDeliveryDirectory,
  type AdminWebhookDeliveryFilter,
  type AdminWebhookDeliverySource,
  type AdminWebhookDeliverySummary,
} from './webhook-delivery-directory.js';
export { toAdminTaskSummary, type SummarisableTask } from './task-summary.js';
