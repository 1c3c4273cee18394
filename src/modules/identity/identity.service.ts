import { Injectable } from '@nestjs/common';
import { type CursorPosition, notFound } from '../../../libs/common/index.js';
import type { ApiKeyEntity, ApiKeyStatus, KeyEnvironment } from './api-key.entity.js';
import { generateApiKey } from './api-key-format.js';
import { IdentityRepository } from './identity.repository.js';
import type { WorkspaceEntity } from './workspace.entity.js';

/** A workspace as other modules see it (a plain object, never the entity). */
export interface Workspace {
  id: string;
  name: string;
  createdAt: Date;
}

/** An API key as other modules see it: everything but the hash of its secret. */
export interface ApiKey {
  id: string;
  workspaceId: string;
  name: string;
  environment: KeyEnvironment;
  prefix: string;
  status: ApiKeyStatus;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** The whole key: returned once, never stored. */
  key: string;
}

const toWorkspace = ({ id, name, createdAt }: WorkspaceEntity): Workspace => ({ id, name, createdAt });

const toApiKey = ({ id, workspaceId, name, environment, prefix, status, createdAt, revokedAt, lastUsedAt }: ApiKeyEntity): ApiKey => ({
  id,
  workspaceId,
  name,
  environment,
  prefix,
  status,
  createdAt,
  revokedAt,
  lastUsedAt,
});

/** Workspaces and their API keys: the facade other modules (admin, CLI, demo seed) call. */
@Injectable()
export class IdentityService {
  constructor(private readonly repository: IdentityRepository) {}

  async createWorkspace(name: string): Promise<Workspace> {
    return toWorkspace(await this.repository.createWorkspace(name));
  }

  async getWorkspace(id: string): Promise<Workspace> {
    const workspace = await this.repository.findWorkspace(id);
    if (!workspace) throw notFound('workspace');
    return toWorkspace(workspace);
  }

  /** Newest first; `limit + 1` rows so the caller can tell whether more exist. */
  async listWorkspaces(limit: number, after?: CursorPosition, search?: string): Promise<Workspace[]> {
    return (await this.repository.listWorkspaces(limit, after, search)).map(toWorkspace);
  }

  countWorkspaces(): Promise<number> {
    return this.repository.countWorkspaces();
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
    return { apiKey: toApiKey(apiKey), key: generated.key };
  }

  /** Newest first; `limit + 1` rows. */
  async listApiKeys(workspaceId: string, limit: number, after?: CursorPosition): Promise<ApiKey[]> {
    return (await this.repository.listApiKeys(workspaceId, limit, after)).map(toApiKey);
  }

  async revokeApiKey(keyId: string): Promise<ApiKey> {
    const key = await this.repository.revokeApiKey(keyId);
    if (!key) throw notFound('API key');
    return toApiKey(key);
  }

  async getApiKey(keyId: string): Promise<ApiKey> {
    const key = await this.repository.findApiKey(keyId);
    if (!key) throw notFound('API key');
    return toApiKey(key);
  }
}
