import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { randomUrlSafe } from '../crypto';

// A webhook's signing secret signs every request it sends, and an admin may read it
// back (Zendesk's GET /webhooks/{id}/signing_secret): unlike a client secret it cannot
// be stored as a one-way hash. It is stored encrypted with AES-256-GCM under a key
// derived (HKDF-SHA-256) from HASH_KEY, bound to its account (the additional data), so
// that a copy of the database alone does not reveal it. Changing HASH_KEY makes the
// stored secrets unreadable: `open` then answers null, showing the secret answers 409 and a
// delivery ends without a request, both saying to reset it (docs/api.md, "Webhooks").

export const SIGNING_ALGORITHM = 'SHA256';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new signing secret: 256 bits from the CSPRNG, url-safe (43 characters). */
export function newSigningSecret(): string {
  return randomUrlSafe(32);
}

/** Encrypts and decrypts signing secrets under a key derived from the service's HASH_KEY. */
export class SigningSecretBox {
  private readonly key: Buffer;

  constructor(hashKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', hashKey, Buffer.alloc(0), 'webhook signing secret v1', 32));
  }

  /** `v1.<iv>.<ciphertext><tag>`, base64url: what the webhooks table stores. */
  seal(accountId: bigint, secret: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`webhook:${accountId}`, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The secret; null when the stored value was not sealed with this key for this account (HASH_KEY changed). */
  open(accountId: bigint, stored: string): string | null {
    const [version, iv, sealed, extra] = stored.split('.');
    if (version !== VERSION || !iv || !sealed || extra !== undefined) return null;
    const bytes = Buffer.from(sealed, 'base64url');
    const nonce = Buffer.from(iv, 'base64url');
    if (bytes.length <= TAG_BYTES || nonce.length !== IV_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
      decipher.setAAD(Buffer.from(`webhook:${accountId}`, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return null; // the authentication tag does not match: another key, or another account's value
    }
  }
}

/** What a webhook whose secret cannot be read says: why, and what to do. */
export function unreadableSecretMessage(webhookId: bigint): string {
  return `The signing secret of webhook ${webhookId} cannot be read: HASH_KEY changed since it was made. Reset it (POST /api/v2/webhooks/${webhookId}/signing_secret) and give the receiver the new one`;
}
