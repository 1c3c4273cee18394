import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../libs/common/index.js';
import { AppConfig } from '../../config/app-config.js';

/** Opened secrets the delivery worker keeps (one per endpoint); the least recently used goes first past this. */
const OPENED_SECRETS = 10_000;

/** `whsec_` + 32 random bytes in base64url (DESIGN §4a). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/**
 * Seals and opens endpoint signing secrets. The row id is the AAD, so a sealed secret only opens
 * on its own row. Keys: SECRETS_ENCRYPTION_KEY seals; it and SECRETS_ENCRYPTION_KEYS_PREVIOUS open.
 */
@Injectable()
export class WebhookSecrets {
  private readonly box: SecretBox;
  /** Endpoint id → the sealed text last opened for it and its secret (see openCurrent). */
  private readonly opened = new Map<string, { sealed: string; secret: string }>();

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

  /**
   * `open`, remembered per endpoint for the delivery worker, which signs with the same secret many
   * times a second. The sealed text read with the delivery's claim is the key's version: a rotation
   * (or a re-seal under a new key) changes it, so an entry only ever answers for the exact sealed
   * text in the row now, and the old secret stops signing at the first claim after the rotation
   * committed, whichever process made it. Bounded (least recently used out first).
   */
  openCurrent(sealed: string, endpointId: string): string {
    const hit = this.opened.get(endpointId);
    this.opened.delete(endpointId);
    const secret = hit?.sealed === sealed ? hit.secret : this.open(sealed, endpointId);
    this.opened.set(endpointId, { sealed, secret });
    if (this.opened.size > OPENED_SECRETS) this.opened.delete(this.opened.keys().next().value!);
    return secret;
  }

  /** Drops what openCurrent remembers of an endpoint (its secret was just rotated here): nothing of the old one stays in memory. */
  forget(endpointId: string): void {
    this.opened.delete(endpointId);
  }
}
