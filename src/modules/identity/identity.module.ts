import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminGuard } from './admin.guard.js';
import { ApiKeyEntity } from './api-key.entity.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { IdentityRepository } from './identity.repository.js';
import { IdentityService } from './identity.service.js';
import { KeyInvalidations } from './key-invalidations.js';
import { WorkspaceEntity } from './workspace.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceEntity, ApiKeyEntity])],
  providers: [IdentityRepository, IdentityService, KeyInvalidations, AdminGuard, ApiKeyGuard, { provide: APP_GUARD, useExisting: ApiKeyGuard }],
  exports: [IdentityService, AdminGuard, ApiKeyGuard],
})
export class IdentityModule {}
