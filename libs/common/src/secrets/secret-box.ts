import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** One AES-256 key and the id stored beside every ciphertext it sealed. */
export interface SecretKey {
  id: string;
  key: Buffer;
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * Encrypts small secrets at rest (webhook signing secrets; realtime and alternate next) with
 * AES-256-GCM. The envelope `v1:<keyId>:<iv>:<tag>:<ciphertext>` (base64url parts) names the key
 * that sealed it, so the key can be rotated: new seals use the current key, and envelopes sealed
 * by a previous key still open while that key is listed. `context` (the owning row's id) is bound
 * as additional authenticated data: an envelope copied onto another row does not open.
 */
export class SecretBox {
  private readonly byId = new Map<string, Buffer>();

  constructor(
    private readonly current: SecretKey,
    previous: readonly SecretKey[] = [],
  ) {
    for (const k of [current, ...previous]) {
      if (k.key.length !== 32) throw new SecretBoxError(`key ${k.id}: AES-256 needs 32 bytes, got ${k.key.length}`);
      if (!this.byId.has(k.id)) this.byId.set(k.id, k.key);
    }
  }

  /** Keys given as base64 (the configuration's form); each key's id is derived from it. */
  static fromBase64Keys(current: string, previous: readonly string[] = []): SecretBox {
    const toKey = (encoded: string): SecretKey => {
      const key = Buffer.from(encoded, 'base64');
      return { id: secretKeyId(key), key };
    };
    return new SecretBox(toKey(current), previous.map(toKey));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, this.current.id, b64(iv), b64(cipher.getAuthTag()), b64(ciphertext)].join(':');
  }

  /** Throws SecretBoxError when the envelope is malformed, its key is unknown, or it was tampered with. */
  open(envelope: string, context: string): string {
    const parts = envelope.split(':');
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretBoxError('not a v1 secret envelope');
    const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
    const key = this.byId.get(keyId);
    if (!key) throw new SecretBoxError(`secret sealed by key ${keyId}, which is neither the current nor a previous key`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError(`secret sealed by key ${keyId} does not authenticate (tampered, or sealed for another row)`);
    }
  }

  /** The id of the key that sealed an envelope (a re-seal sweep moves those not sealed by the current key). */
  static keyIdOf(envelope: string): string | undefined {
    const parts = envelope.split(':');
    return parts.length === 5 && parts[0] === VERSION ? parts[1] : undefined;
  }
}

/** A short public name of a key: derived from it (nothing to configure), reveals nothing usable. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('svc-secret-key-id\0').update(key).digest('base64url').slice(0, 11);
}

const b64 = (bytes: Buffer): string => bytes.toString('base64url');
