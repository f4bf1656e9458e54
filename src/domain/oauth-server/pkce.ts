import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../crypto';

// PKCE (RFC 7636), S256 only: `plain` would let a code stolen with its request be redeemed.

/** code_verifier and code_challenge alphabet and lengths (RFC 7636 §4.1, §4.2: a S256 challenge is 43 characters). */
export const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether the verifier answers the challenge; time independent of where they differ. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  return VERIFIER.test(verifier) && constantTimeEqual(s256(verifier), challenge);
}
