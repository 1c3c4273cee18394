import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WebhookEventType } from './webhook-events.js';

/** A receiver URL of an API key (DESIGN §5 `webhook_endpoint`). DELETE disables it; rows are never removed. */
@Entity('webhook_endpoint')
export class WebhookEndpointEntity {
  /** `webhook:<uuid>`, the public id. */
  @PrimaryColumn('text')
  id!: string;

  @Column('uuid', { name: 'api_key_id' })
  apiKeyId!: string;

  /** Normalized absolute URL (WHATWG `href`), at most 2,048 characters. */
  @Column('text')
  url!: string;

  /** Non-empty, duplicate-free, in the order the client sent them. */
  @Column('text', { array: true })
  events!: WebhookEventType[];

  @Column('boolean')
  enabled!: boolean;

  /** The signing secret sealed by SecretBox (`v1:<keyId>:<iv>:<tag>:<ciphertext>`, the row id as AAD); never in clear. */
  @Column('text', { name: 'secret_sealed' })
  secretSealed!: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at' })
  updatedAt!: Date;
}
