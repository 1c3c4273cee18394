import { Injectable } from '@nestjs/common';
import { Clock, CommonErrorCode, DomainError, isIdOf, newId } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';
import type { AuthenticatedKey } from '../identity/index.js';
import type { CreateWebhookEndpointDto } from './dto/create-webhook-endpoint.dto.js';
import type { UpdateWebhookEndpointDto } from './dto/update-webhook-endpoint.dto.js';
import { WebhookEndpointEntity } from './webhook-endpoint.entity.js';
import { type EndpointChanges, WebhookEndpointRepository } from './webhook-endpoint.repository.js';
import {
  toWebhookEndpointResource,
  type WebhookEndpointListDto,
  type WebhookEndpointResponseDto,
  type WebhookEndpointSecretDto,
} from './webhook-endpoint.resource.js';
import { checkWebhookEvents, checkWebhookUrl, type UrlPolicy } from './webhook-endpoint-rules.js';
import { endpointNotFound, WebhookErrorCode } from './webhook-errors.js';
import { WebhookEndpointsService } from './webhook-endpoints.service.js';
import { newWebhookSecret, WebhookSecrets } from './webhook-secrets.js';

/**
 * The most a list answer holds: the highest WEBHOOK_MAX_ENDPOINTS_PER_KEY allows, so a key whose
 * limit was lowered after it registered more still sees every endpoint it has.
 */
const MAX_LISTED_ENDPOINTS = 1000;

/**
 * What the endpoint routes do: every refusal happens before any write, and every read or write
 * of an endpoint is scoped to the calling key (another key's endpoint is answered 404).
 */
@Injectable()
export class WebhookEndpointCommands {
  private readonly policy: UrlPolicy;

  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly facade: WebhookEndpointsService,
  ) {
    this.policy = { allowHttp: config.env.OUTBOUND_ALLOW_HTTP, allowPrivate: config.env.OUTBOUND_ALLOW_PRIVATE };
  }

  async create(key: AuthenticatedKey, dto: CreateWebhookEndpointDto): Promise<WebhookEndpointSecretDto> {
    const url = checkWebhookUrl(dto.url, this.policy);
    const events = checkWebhookEvents(dto.events);
    const id = newId('webhook');
    const secret = newWebhookSecret();
    const now = this.clock.now();
    const row = Object.assign(new WebhookEndpointEntity(), {
      id,
      apiKeyId: key.id,
      url,
      events,
      enabled: true,
      secretSealed: this.secrets.seal(secret, id),
      createdAt: now,
      updatedAt: now,
    } satisfies WebhookEndpointEntity);
    const limit = this.config.env.WEBHOOK_MAX_ENDPOINTS_PER_KEY;
    const outcome = await this.endpoints.insertWithinLimit(row, limit);
    if (outcome.kind === 'limit_reached') {
      throw new DomainError(409, WebhookErrorCode.EndpointLimit, `an API key keeps at most ${limit} webhook endpoints, disabled ones included; change one of them (PATCH) instead`);
    }
    return { id, secret };
  }

  async list(key: AuthenticatedKey): Promise<WebhookEndpointListDto> {
    const rows = await this.endpoints.listOwned(key.id, MAX_LISTED_ENDPOINTS);
    return { items: rows.map(toWebhookEndpointResource) };
  }

  /** One endpoint of the key, as listed (never its secret); another key's is not found. */
  async get(key: AuthenticatedKey, id: string): Promise<WebhookEndpointResponseDto> {
    const row = isIdOf('webhook', id) ? await this.endpoints.findOwned(key.id, id) : null;
    if (!row) throw endpointNotFound();
    return toWebhookEndpointResource(row);
  }

  async update(key: AuthenticatedKey, id: string, dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointResponseDto> {
    if (dto.url === undefined && dto.events === undefined && dto.enabled === undefined) {
      throw new DomainError(400, CommonErrorCode.InvalidField, 'body: name at least one of url, events, enabled');
    }
    const changes: EndpointChanges = {
      ...(dto.url !== undefined ? { url: checkWebhookUrl(dto.url, this.policy) } : {}),
      ...(dto.events !== undefined ? { events: checkWebhookEvents(dto.events) } : {}),
      ...(dto.enabled !== undefined ? { enabled: dto.enabled } : {}),
    };
    const row = await this.changeOwned(key, id, changes);
    if (changes.enabled === false) await this.facade.endpointDisabled(row.id);
    return toWebhookEndpointResource(row);
  }

  /**
   * DELETE: the endpoint is disabled and kept (spec › states); repeating it answers the same. Its
   * pending deliveries end `failed` (`endpoint_disabled`) before the answer.
   */
  async disable(key: AuthenticatedKey, id: string): Promise<WebhookEndpointResponseDto> {
    const row = await this.changeOwned(key, id, { enabled: false });
    await this.facade.endpointDisabled(row.id);
    return toWebhookEndpointResource(row);
  }

  /**
   * A new secret replaces the old one in the same statement: the next delivery attempt signs with
   * it (the worker checks the sealed text at each claim); this process also drops the old one now.
   */
  async rotateSecret(key: AuthenticatedKey, id: string): Promise<WebhookEndpointSecretDto> {
    const secret = newWebhookSecret();
    await this.changeOwned(key, id, { secretSealed: this.secrets.seal(secret, id) });
    this.secrets.forget(id);
    return { id, secret };
  }

  private async changeOwned(key: AuthenticatedKey, id: string, changes: EndpointChanges): Promise<WebhookEndpointEntity> {
    if (!isIdOf('webhook', id)) throw endpointNotFound();
    const row = await this.endpoints.updateOwned(key.id, id, changes, this.clock.now());
    if (!row) throw endpointNotFound();
    return row;
  }
}
