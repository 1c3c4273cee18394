import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminGuard } from './admin.guard.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { IdentityCoreModule } from './identity-core.module.js';

/** Identity for the HTTP app: the core (workspaces, keys) plus the guards every route goes through. */
@Module({
  imports: [IdentityCoreModule],
  providers: [AdminGuard, ApiKeyGuard, { provide: APP_GUARD, useExisting: ApiKeyGuard }],
  exports: [IdentityCoreModule, AdminGuard, ApiKeyGuard],
})
export class IdentityModule {}
