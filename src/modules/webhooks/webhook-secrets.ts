import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';

/** `whsec_` + 32 random bytes in base64url (DESIGN §4a). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * Seals and opens endpoint signing secrets. The row id is the AAD, so a sealed secret only opens
 * on its own row. Keys: SECRETS_ENCRYPTION_KEY seals; it and SECRETS_ENCRYPTION_KEYS_PREVIOUS open.
 */
@Injectable()
export class WebhookSecrets {
  private readonly box: SecretBox;

  constructor(config: AppConfig) {
    const previous = config.env.SECRETS_ENCRYPTION_KEYS_PREVIOUS?.split(',').filter((k) => k !== '') ?? [];
    this.box = SecretBox.fromBase64Keys(config.env.SECRETS_ENCRYPTION_KEY, previous);
  }

  seal(secret: string, endpointId: string): string {
    return this.box.seal(secret, endpointId);
  }

  open(sealed: string, endpointId: string): string {
    return this.box.open(sealed, endpointId);
  }
}
