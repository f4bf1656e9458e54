import type { Limits } from '../../config';
import { RateLimitedError, UnauthenticatedError } from '../errors';
import { constantTimeEqual, hmacHex, sha256Hex } from '../crypto';
import { clientOf } from './client-address';
import type { KdfTurn } from './kdf-queue';
import type { LoginAttempts } from './login-attempt';
import { loginAddressKey, loginEmailKeyPrefix } from './login-keys';
import type { LoginRepository, UserRow } from './login.repository';
import { dummyPasswordHash, verifyPassword } from './passwords';
import type { Viewer } from './viewer';

const BASIC_CACHE_TTL_MS = 60_000;
const BASIC_CACHE_MAX = 10_000;
const THROTTLED = 'Too many failed login attempts; try again later';
/** Zendesk's API token sign-in names the user "{email}/token" */
const TOKEN_SUFFIX = '/token';

/** Whether a Basic user name is Zendesk's API-token form, "{email}/token" (then the password is the token). */
export function namesApiToken(name: string): boolean {
  return name.length > TOKEN_SUFFIX.length && name.toLowerCase().endsWith(TOKEN_SUFFIX);
}

/** What the lookup found: the candidate, and for an API token sign-in its token row's id (null: no such live token). */
interface Found {
  candidate: UserRow | undefined;
  /** undefined: a password sign-in */
  apiTokenId?: string | null;
}

export interface BasicLoginOptions {
  logins: LoginRepository;
  attempts: LoginAttempts;
  hashKey: Buffer;
  limits: Pick<Limits, 'loginFailures' | 'loginAddressFailures' | 'loginWindowSeconds'>;
}

/**
 * Basic credentials → a Viewer: exactly one KDF per attempt that is not answered
 * from the cache (login-attempt.ts: throttled per (account, email) and per client
 * address in the database, in the KDF queue), with a short in-process cache of
 * successful verifications.
 *
 * Which user a Basic login names (docs/api.md "Accounts and hosts"): on an account's
 * subdomain host, the active user holding the email in that account; on the plain
 * host, the active user holding the email in the account with the lowest id. One
 * candidate at most, so one KDF, whatever the data: the time of an answer does not
 * tell in how many accounts an email is held. No candidate (unknown email, inactive
 * user, unknown subdomain): the KDF runs against a dummy hash, and the answer is the
 * same 401. The guess counts against the account it names (the subdomain's, or on
 * the plain host the candidate's), so that no other account can spend or reset it.
 *
 * An API token (docs/api.md, "API tokens"): Basic `{email}/token:{api_token}`. The token
 * names the account (found by its keyed hash in the same lookup statement); the user is
 * the active user holding the email there, with their own role. It is guessed exactly as
 * a password is: the same windows, the same KDF queue turn, one KDF (against the dummy
 * hash: the token itself is a keyed hash, the KDF only makes a wrong token cost and
 * look like a wrong password), the same 401. A success is cached like a password's, so
 * that later requests run no KDF; each still re-reads the token row by its hash in the
 * lookup, so that a deleted token, a deactivated user or api_token_access turned off
 * refuses the very next request, in every process.
 */
export class BasicLogin {
  // sha256(key, subdomain, email, password) → the password hash it was verified against (an API
  // token's: the token row it was verified with)
  private readonly cache = new Map<string, { userId: string; passwordHash?: string; apiRowId?: string; until: number }>();
  // the same cache key → the verification (KDF) of those credentials under way in this process
  private readonly verifying = new Map<string, Promise<unknown>>();

  constructor(private readonly options: BasicLoginOptions) {}

  async login(encoded: string, address: string | undefined, subdomain: string | undefined): Promise<Viewer> {
    const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw new UnauthenticatedError();
    const password = decoded.slice(colon + 1);
    const named = decoded.slice(0, colon).trim();
    // Zendesk's API token form: "{email}/token" as the user name, the token as the password
    const viaToken = namesApiToken(named);
    const emailKey = (viaToken ? named.slice(0, -TOKEN_SUFFIX.length) : named).trim().toLowerCase();
    // No stored email holds NUL (PostgreSQL text cannot), so such a login names nobody.
    if (emailKey.length > 320 || password.length > 1024 || emailKey.includes('\0')) throw new UnauthenticatedError();

    const { hashKey, limits, logins, attempts } = this.options;
    const others = address !== undefined && limits.loginAddressFailures !== undefined ? [{ key: loginAddressKey(hashKey, address), limit: limits.loginAddressFailures }] : [];
    const email = { emailKey, keyPrefix: loginEmailKeyPrefix(hashKey, emailKey), limit: limits.loginFailures };
    // an API token is found by its keyed hash, in the same statement
    const apiTokenHash = viaToken ? hmacHex(hashKey, password) : undefined;
    // The email's window first (its count decides whether a success clears anything), then the address's.
    const { windows, counts, candidate, apiTokenId } = await logins.lookup(email, others, limits.loginWindowSeconds, subdomain, apiTokenHash);
    const blocked = counts.filter((c, i) => c.used >= windows[i].limit);
    if (blocked.length > 0) throw new RateLimitedError(Math.max(...blocked.map((c) => c.retryAfter)), THROTTLED);
    const cacheKey = sha256Hex(`${hashKey.toString('hex')}\0${subdomain ?? ''}\0${viaToken ? 'token' : 'password'}\0${emailKey}\0${password}`);
    const found = { candidate, apiTokenId: viaToken ? (apiTokenId ?? null) : undefined };
    let user = this.cachedMatch(cacheKey, found);
    const inFlight = user ? undefined : this.verifying.get(cacheKey);
    if (inFlight) {
      // The very same credentials are being verified: wait for that KDF rather than run
      // another (a client's burst of concurrent first requests costs one KDF, not one each).
      // Only a success is shared, through the cache; after a failure this is a guess of its own.
      await inFlight.catch(() => undefined);
      user = this.cachedMatch(cacheKey, found);
    }
    if (user) {
      if (counts[0].used > 0) await attempts.succeededWithoutAttempt(windows[0]);
    } else {
      // (registered before its first await, so that every concurrent twin waits for it)
      let verified: UserRow | undefined;
      const verification = attempts.attempt({
        windows,
        client: address === undefined ? undefined : clientOf(address),
        verify: async (turn) => (verified = await this.verify(cacheKey, found, password, turn)) !== undefined,
        throttled: THROTTLED,
      });
      this.verifying.set(cacheKey, verification);
      try {
        if (!(await verification) || !verified) throw new UnauthenticatedError();
      } finally {
        if (this.verifying.get(cacheKey) === verification) this.verifying.delete(cacheKey);
      }
      user = verified;
    }
    return {
      accountId: BigInt(user.account_id),
      userId: BigInt(user.id),
      role: user.role,
      email: user.email,
      name: user.name,
      via: viaToken ? 'api_token' : 'basic',
    };
  }

  /** The user these exact credentials were verified against within the last minute, if still valid. */
  private cachedMatch(cacheKey: string, { candidate, apiTokenId: apiRowId }: Found): UserRow | undefined {
    const cached = this.cache.get(cacheKey);
    if (!cached) return undefined;
    if (cached.until > Date.now() && candidate?.active && String(candidate.id) === cached.userId) {
      // Valid only while the candidate is still that user, with the very hash (or token row) it was checked against.
      // (an API token's row id is no secret: the token itself was matched by its keyed hash in the lookup)
      if (apiRowId !== undefined ? apiRowId !== null && apiRowId === cached.apiRowId : cached.passwordHash !== undefined && constantTimeEqual(candidate.password_hash, cached.passwordHash)) {
        return candidate;
      }
    }
    this.cache.delete(cacheKey);
    return undefined;
  }

  /**
   * Exactly one KDF, in the given turn: against the candidate's hash, or a dummy one when there is none.
   * An API token: against the dummy hash always (the lookup found the token, or not, by its keyed hash),
   * so that a wrong token takes the time of a wrong password.
   */
  private async verify(cacheKey: string, { candidate, apiTokenId }: Found, password: string, turn: KdfTurn): Promise<UserRow | undefined> {
    if (apiTokenId !== undefined) {
      await verifyPassword(password, dummyPasswordHash(), turn);
      if (!candidate?.active || apiTokenId === null) return undefined;
      this.remember(cacheKey, { userId: String(candidate.id), apiRowId: apiTokenId, until: Date.now() + BASIC_CACHE_TTL_MS });
      return candidate;
    }
    if (candidate?.active) {
      if (!(await verifyPassword(password, candidate.password_hash, turn))) return undefined;
      this.remember(cacheKey, { userId: String(candidate.id), passwordHash: candidate.password_hash, until: Date.now() + BASIC_CACHE_TTL_MS });
      return candidate;
    }
    // No candidate: spend the same time as a wrong password.
    await verifyPassword(password, dummyPasswordHash(), turn);
    return undefined;
  }

  private remember(cacheKey: string, entry: { userId: string; passwordHash?: string; apiRowId?: string; until: number }): void {
    if (this.cache.size >= BASIC_CACHE_MAX) this.cache.clear();
    this.cache.set(cacheKey, entry);
  }
}
