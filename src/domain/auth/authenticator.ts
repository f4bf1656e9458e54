import { isIP } from 'node:net';
import type { LoginRepository, LoginWindow, UserRow } from './login.repository';
import type { PresentedTokenRepository } from '../oauth-tokens/presented-token.repository';
import type { Limits } from '../../config';
import { ForbiddenError, RateLimitedError, ServiceUnavailableError, UnauthenticatedError } from '../errors';
import { constantTimeEqual, hmacHex, sha256Hex } from '../crypto';
import { allScopesValid } from '../scopes';
import { claimKdfTurn, dummyPasswordHash, KDF_BUSY_RETRY_AFTER_SECONDS, kdfQueueFullFor, verifyPassword, type KdfTurn } from './passwords';
import type { Viewer } from './viewer';

export interface Credentials {
  authorization?: string;
  onBehalfOf?: string;
  /** the client's address (Fastify's request.ip): the per-address login throttle, and the KDF queue's fairness */
  address?: string;
  /** the account subdomain of the Host the request came on (request-context.ts); undefined on the plain host */
  subdomain?: string;
}

const BASIC_CACHE_TTL_MS = 60_000;
const BASIC_CACHE_MAX = 10_000;

export interface AuthenticatorOptions {
  /** every statement of the login: credential lookup and throttle windows */
  logins: LoginRepository;
  /** the Bearer lookup */
  tokens: PresentedTokenRepository;
  hashKey: Buffer;
  limits: Pick<Limits, 'loginFailures' | 'loginAddressFailures' | 'loginWindowSeconds'>;
}

/**
 * The client an address stands for: an IPv4-mapped IPv6 address is its IPv4
 * address, and an IPv6 address its /64 (what one host, or one customer, gets:
 * counting single IPv6 addresses would let a client rotate through billions).
 */
export function clientOf(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (/^::ffff:/i.test(bare) && isIP(bare.slice(7)) === 4) return bare.slice(7);
  if (isIP(bare) !== 6) return bare;
  const [head, tail] = bare.toLowerCase().split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${all.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/**
 * The rolling-window keys of the login throttle (rate_window_take): HMACs under
 * the service's key, so that no one can aim a key (or its lock) at another's, and
 * the database holds neither emails nor addresses in the clear.
 */
export function loginEmailKey(hashKey: Buffer, emailKey: string): string {
  return `login-email:${hmacHex(hashKey, `login-throttle\0${emailKey}`)}`;
}
export function loginAddressKey(hashKey: Buffer, address: string): string {
  return `login-address:${hmacHex(hashKey, `login-address\0${clientOf(address)}`)}`;
}

/**
 * Turns the Authorization (and X-On-Behalf-Of) headers into a Viewer.
 * Bearer: one indexed query, no KDF. Basic: exactly one scrypt per attempt that is
 * not answered from the cache, throttled per email and per client address in the
 * database, with a short in-process cache of successful verifications.
 *
 * Which user a Basic login names (decisions, for docs/api.md): on an account's
 * subdomain host, the active user holding the email in that account; on the plain
 * host, the active user holding the email in the account with the lowest id (to
 * reach another account, use its subdomain). One candidate at most, so one KDF,
 * whatever the data: the time of an answer does not tell in how many accounts an
 * email is held. No candidate (unknown email, inactive user, unknown subdomain):
 * the KDF runs against a dummy hash, and the answer is the same 401.
 */
export class Authenticator {
  // sha256(key, subdomain, email, password) → the password hash it was verified against
  private readonly basicCache = new Map<string, { userId: string; passwordHash: string; until: number }>();
  // the same cache key → the verification (KDF) of those credentials under way in this process
  private readonly verifying = new Map<string, Promise<unknown>>();

  constructor(private readonly options: AuthenticatorOptions) {}

  /** null when no credentials were presented. */
  async authenticate(credentials: Credentials): Promise<Viewer | null> {
    const header = credentials.authorization?.trim();
    if (!header) {
      if (credentials.onBehalfOf !== undefined) throw new UnauthenticatedError();
      return null;
    }
    const space = header.indexOf(' ');
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer') {
      const viewer = await this.bearer(value, credentials.subdomain);
      return credentials.onBehalfOf === undefined ? viewer : this.impersonate(viewer, credentials.onBehalfOf);
    }
    if (scheme === 'basic') {
      const viewer = await this.basic(value, credentials.address, credentials.subdomain);
      if (credentials.onBehalfOf !== undefined) throw new ForbiddenError();
      return viewer;
    }
    throw new UnauthenticatedError();
  }

  hashToken(token: string): string {
    return hmacHex(this.options.hashKey, token);
  }

  /**
   * On a subdomain host, a token of another account (or any token, when no account
   * has that subdomain) is refused exactly like an unknown token: 401, and no
   * used_at touch. On the plain host a token works as it always did.
   */
  private async bearer(token: string, subdomain: string | undefined): Promise<Viewer> {
    if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) throw new UnauthenticatedError('Bearer');
    const found = await this.options.tokens.findPresented(this.hashToken(token), subdomain);
    if (!found) throw new UnauthenticatedError('Bearer');
    const { record } = found;
    // A token with any invalid scope is refused outright (seed §4.3 rule 6).
    if (!allScopesValid(record.scopes)) throw new ForbiddenError();
    return {
      accountId: record.accountId,
      userId: record.userId,
      role: found.role,
      email: found.email,
      name: found.name,
      via: 'bearer',
      token: { id: record.id, scopes: record.scopes, clientScopes: found.clientScopes, record },
    };
  }

  private async impersonate(viewer: Viewer, email: string): Promise<Viewer> {
    const token = viewer.token;
    if (!token || viewer.role !== 'admin' || !token.scopes.includes('impersonate') || email.includes('\0')) throw new ForbiddenError();
    const target = await this.options.logins.activeEndUser(viewer.accountId, email.trim().toLowerCase());
    if (!target) throw new ForbiddenError();
    return {
      accountId: viewer.accountId,
      userId: BigInt(target.id),
      role: 'end_user',
      email: target.email,
      name: target.name,
      via: 'bearer',
      token,
      impersonatorId: viewer.userId,
      impersonatorName: viewer.name,
    };
  }

  private async basic(encoded: string, address: string | undefined, subdomain: string | undefined): Promise<Viewer> {
    const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw new UnauthenticatedError();
    const email = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const emailKey = email.trim().toLowerCase();
    // No stored email holds NUL (PostgreSQL text cannot), so such a login names nobody.
    if (emailKey.length > 320 || password.length > 1024 || emailKey.includes('\0')) throw new UnauthenticatedError();

    // The email's window first (its count decides whether a success clears anything), then the address's.
    const windows = this.windows(emailKey, address);
    const { counts, candidate } = await this.lookup(windows, emailKey, subdomain);
    const blocked = counts.filter((c, i) => c.used >= windows[i].limit);
    if (blocked.length > 0) throw this.throttled(Math.max(...blocked.map((c) => c.retryAfter)));
    const cacheKey = sha256Hex(`${this.options.hashKey.toString('hex')}\0${subdomain ?? ''}\0${emailKey}\0${password}`);
    let user = this.cachedMatch(cacheKey, candidate);
    const inFlight = user ? undefined : this.verifying.get(cacheKey);
    if (inFlight) {
      // The very same credentials are being verified: wait for that KDF rather than run
      // another (a client's burst of concurrent first requests costs one KDF, not one each).
      // Only a success is shared, through the cache; after a failure this is a guess of its own.
      await inFlight.catch(() => undefined);
      user = this.cachedMatch(cacheKey, candidate);
    }
    let attemptHits: string[] = [];
    if (!user) {
      // (registered before its first await, so that every concurrent twin waits for it)
      const verification = this.fullVerification(windows, cacheKey, candidate, password, address);
      this.verifying.set(cacheKey, verification);
      try {
        ({ user, hits: attemptHits } = await verification);
      } finally {
        if (this.verifying.get(cacheKey) === verification) this.verifying.delete(cacheKey);
      }
    }
    // Success clears the email's count (the attempt just recorded included); of the
    // address's, only this attempt, which was no failure.
    if (attemptHits.length > 0 || counts[0].used > 0) {
      await this.options.logins.clear(windows[0].key, attemptHits);
    }
    return {
      accountId: BigInt(user.account_id),
      userId: BigInt(user.id),
      role: user.role,
      email: user.email,
      name: user.name,
      via: 'basic',
    };
  }

  /**
   * One verification whose answer the caller learns, in this order:
   * 0. when the KDF queue (passwords.ts) is already full for this client: 503 with
   *    Retry-After at once, before any write (a burst's excess costs one read each);
   * 1. the attempt is counted in each window, as a failure until it succeeds, before
   *    the KDF runs, atomically across processes (rate_window_take), so that
   *    concurrent guesses cannot get past a limit; refused by either window: 429,
   *    and nothing counted;
   * 2. a place in the KDF queue, claimed at once: when the queue has filled
   *    meanwhile, 503, and the attempt is taken back (it was no failure: nothing was
   *    verified). The same when the place is given to a fairer claim while waiting;
   * 3. exactly one KDF; on failure, the failure's time is set to when it is known
   *    (its window starts then, as before the KDF was counted).
   * Only counted attempts claim places, so a burst on one email past its limit is
   * answered 429 (not 503) as long as its counted attempts fit the queue.
   */
  private async fullVerification(
    windows: LoginWindow[],
    cacheKey: string,
    candidate: UserRow | undefined,
    password: string,
    address: string | undefined,
  ): Promise<{ user: UserRow; hits: string[] }> {
    const client = address === undefined ? undefined : clientOf(address);
    if (kdfQueueFullFor(client)) throw new ServiceUnavailableError(KDF_BUSY_RETRY_AFTER_SECONDS);
    const hits = await this.recordAttempt(windows);
    let turn: KdfTurn | undefined;
    try {
      turn = claimKdfTurn(client);
      const found = await this.verify(cacheKey, candidate, password, turn);
      if (!found) {
        await this.options.logins.failedNow(hits, this.options.limits.loginWindowSeconds);
        throw new UnauthenticatedError();
      }
      return { user: found, hits };
    } catch (err) {
      if (err instanceof ServiceUnavailableError) await this.options.logins.takeBack(hits);
      throw err;
    } finally {
      turn?.release();
    }
  }

  private windows(emailKey: string, address: string | undefined): LoginWindow[] {
    const { hashKey, limits } = this.options;
    const windows = [{ key: loginEmailKey(hashKey, emailKey), limit: limits.loginFailures }];
    if (address !== undefined && limits.loginAddressFailures !== undefined) {
      windows.push({ key: loginAddressKey(hashKey, address), limit: limits.loginAddressFailures });
    }
    return windows;
  }

  private throttled(retryAfter: number): RateLimitedError {
    return new RateLimitedError(retryAfter, 'Too many failed login attempts; try again later');
  }

  /** The user these exact credentials were verified against within the last minute, if still valid. */
  private cachedMatch(cacheKey: string, candidate: UserRow | undefined): UserRow | undefined {
    const cached = this.basicCache.get(cacheKey);
    if (!cached) return undefined;
    if (cached.until > Date.now() && candidate) {
      // Valid only while the candidate is still that user, with the very hash it was checked against.
      if (String(candidate.id) === cached.userId && candidate.active && constantTimeEqual(candidate.password_hash, cached.passwordHash)) return candidate;
    }
    this.basicCache.delete(cacheKey);
    return undefined;
  }

  /** Exactly one KDF, in the given turn: against the candidate's hash, or a dummy one when there is none. */
  private async verify(cacheKey: string, candidate: UserRow | undefined, password: string, turn: KdfTurn): Promise<UserRow | undefined> {
    if (candidate?.active) {
      if (!(await verifyPassword(password, candidate.password_hash, turn))) return undefined;
      if (this.basicCache.size >= BASIC_CACHE_MAX) this.basicCache.clear();
      this.basicCache.set(cacheKey, { userId: String(candidate.id), passwordHash: candidate.password_hash, until: Date.now() + BASIC_CACHE_TTL_MS });
      return candidate;
    }
    // No candidate: spend the same time as a wrong password.
    await verifyPassword(password, dummyPasswordHash(), turn);
    return undefined;
  }

  /**
   * One statement: each window's failures (at most its limit, the newest) and, when
   * it is full, when it lifts (the limit-th newest failure leaves the window; database
   * clock) — a read: the decision that counts is recordAttempt's — and the one user
   * these credentials can name (see the class comment): on a subdomain host, in that
   * account only; on the plain host, in the lowest account id holding the email.
   * Inactive users are never candidates.
   */
  private lookup(windows: LoginWindow[], emailKey: string, subdomain: string | undefined) {
    return this.options.logins.lookup(windows, this.options.limits.loginWindowSeconds, emailKey, subdomain);
  }

  /**
   * Records one attempt in every window, or in none: rate_window_take on each key,
   * the address's before the email's (the email's runs only when the address's
   * allowed: the lateral subquery's filter), in one statement, whose transaction
   * holds both keys' advisory locks until it ends; always taking them in the same
   * order cannot deadlock. When one refuses (429), the hit the other recorded is
   * deleted: a refused attempt is not a new failure. Returns the recorded hits' ids.
   */
  private async recordAttempt(windows: LoginWindow[]): Promise<string[]> {
    const taken = await this.options.logins.recordAttempt(windows, this.options.limits.loginWindowSeconds);
    if ('hits' in taken) return taken.hits;
    throw this.throttled(taken.retryAfter);
  }
}
