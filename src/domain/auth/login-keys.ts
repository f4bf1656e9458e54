import { hmacHex } from '../crypto';
import { clientOf } from './client-address';

// The rolling-window keys of the login throttle (rate_window_take): HMACs under the
// service's key, so that no one can aim a key (or its lock) at another's, and the
// database holds neither emails nor addresses in the clear.

/**
 * The email window's key without its account: the account a guess counts against
 * is known only once the database has named the user (on the plain host, the
 * lowest account id holding the email), so login.repository.ts appends it in the
 * same statement, exactly as loginEmailKey does.
 */
export function loginEmailKeyPrefix(hashKey: Buffer, emailKey: string): string {
  return `login-email:${hmacHex(hashKey, `login-throttle\0${emailKey}`)}:`;
}

/**
 * The failures of one email in one account: a guess counts against the account
 * whose user it names, and only a success in that account clears it. `accountId`
 * undefined: a guess that names no account (an unknown email on the plain host, an
 * unknown subdomain).
 */
export function loginEmailKey(hashKey: Buffer, accountId: bigint | undefined, emailKey: string): string {
  return `${loginEmailKeyPrefix(hashKey, emailKey)}${accountId === undefined ? '-' : String(accountId)}`;
}

export function loginAddressKey(hashKey: Buffer, address: string): string {
  return `login-address:${hmacHex(hashKey, `login-address\0${clientOf(address)}`)}`;
}
