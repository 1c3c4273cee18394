import { Injectable } from '@nestjs/common';
import { notFound } from '../../../libs/common/index.js';
import type { ApiKeyEntity, KeyEnvironment } from './api-key.entity.js';
import { generateApiKey } from './api-key-format.js';
import { IdentityRepository } from './identity.repository.js';
import type { WorkspaceEntity } from './workspace.entity.js';

export interface IssuedApiKey {
  apiKey: ApiKeyEntity;
  /** The whole key: returned once, never stored. */
  key: string;
}

/** Workspaces and their API keys: the facade other modules (admin, CLI, demo seed) call. */
@Injectable()
export class IdentityService {
  constructor(private readonly repository: IdentityRepository) {}

  createWorkspace(name: string): Promise<WorkspaceEntity> {
    return this.repository.createWorkspace(name);
  }

  async getWorkspace(id: string): Promise<WorkspaceEntity> {
    const workspace = await this.repository.findWorkspace(id);
    if (!workspace) throw notFound('workspace');
    return workspace;
  }

  async issueApiKey(workspaceId: string, name: string, environment: KeyEnvironment = 'live'): Promise<IssuedApiKey> {
    await this.getWorkspace(workspaceId);
    const generated = generateApiKey(environment);
    const apiKey = await this.repository.createApiKey({
      workspaceId,
      name,
      environment,
      prefix: generated.prefix,
      secretSha256: generated.secretSha256,
    });
    return { apiKey, key: generated.key };
  }

  async revokeApiKey(keyId: string): Promise<ApiKeyEntity> {
    const key = await this.repository.revokeApiKey(keyId);
    if (!key) throw notFound('API key');
    return key;
  }

  async getApiKey(keyId: string): Promise<ApiKeyEntity> {
    const key = await this.repository.findApiKey(keyId);
    if (!key) throw notFound('API key');
    return key;
  }
}
