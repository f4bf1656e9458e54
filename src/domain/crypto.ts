import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** url-safe random string from `bytes` bytes of CSPRNG output (32 bytes → 43 chars, 256 bits). */
export function randomUrlSafe(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Keyed hash of a token or secret, as stored at rest (hex). */
export function hmacHex(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('hex');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab); // same work either way
    return false;
  }
  return timingSafeEqual(ab, bb);
}
