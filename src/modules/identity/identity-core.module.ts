import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { IdentityRepository } from './identity.repository.js';
import { IdentityService } from './identity.service.js';
import { KeyInvalidations } from './key-invalidations.js';
import { WorkspaceEntity } from './workspace.entity.js';

/**
 * Workspaces and keys without the HTTP side (no guard, no Reflector): what IdentityModule builds
 * on and what the operator CLI boots on its own (docs/decisions.md › CLI boot).
 */
@Module({
  imports: [TypeOrmModule.forFeature([WorkspaceEntity, ApiKeyEntity])],
  providers: [IdentityRepository, IdentityService, KeyInvalidations],
  exports: [IdentityRepository, IdentityService, KeyInvalidations],
})
export class IdentityCoreModule {}
