import { Injectable, Logger } from '@nestjs/common';
import { CommonErrorCode, type CursorPosition, DomainError, notFound } from '../../../libs/common/index.js';
import type { ApiKeyEntity, ApiKeyStatus, KeyEnvironment } from './api-key.entity.js';
import { generateApiKey } from './api-key-format.js';
import { IdentityRepository } from './identity.repository.js';
import type { KeyInvalidation } from './key-cache.js';
import { KeyInvalidations } from './key-invalidations.js';
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
  private readonly logger = new Logger(IdentityService.name);

  constructor(
    private readonly repository: IdentityRepository,
    private readonly invalidations: KeyInvalidations,
  ) {}

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

  /**
   * Idempotent. Answers once the revocation is committed AND every API process was told to
   * forget the key (the invalidation channel). When Redis does not take the invalidation, the
   * key is revoked all the same but this throws 503 `unavailable`: processes that cached the key
   * may accept it until their cache entry expires (API_KEY_CACHE_TTL_MS); revoking again tells
   * them. Any future change of a key's status must announce itself the same way.
   */
  async revokeApiKey(keyId: string): Promise<ApiKey> {
    const key = await this.repository.revokeApiKey(keyId);
    if (!key) throw notFound('API key');
    await this.announce({ keyId: key.id });
    return toApiKey(key);
  }

  private async announce(what: KeyInvalidation): Promise<void> {
    try {
      await this.invalidations.publish(what);
    } catch (error) {
      this.logger.error(`API key invalidation not published (${String(error)}); the change is committed, caches expire within their TTL`);
      const ttlSeconds = Math.ceil(this.invalidations.cache.ttlMs / 1000);
      throw new DomainError(
        503,
        CommonErrorCode.Unavailable,
        `the change is saved, but the API processes could not be told at once (Redis unreachable): they may still accept the key for up to ${ttlSeconds} s; retry to tell them`,
      );
    }
  }

  async getApiKey(keyId: string): Promise<ApiKey> {
    const key = await this.repository.findApiKey(keyId);
    if (!key) throw notFound('API key');
    return toApiKey(key);
  }
}
