import type { Db } from '../../db/create-db';
import type { Limits } from '../../config';
import { ForbiddenError, RateLimitedError, UnauthenticatedError } from '../errors';
import { constantTimeEqual, hmacHex, sha256Hex } from '../crypto';
import { allScopesValid } from '../scopes';
import { dummyPasswordHash, verifyPassword } from './passwords';
import type { PresentedTokenRow, Role, Viewer } from './viewer';

export interface Credentials {
  authorization?: string;
  onBehalfOf?: string;
}

interface UserRow {
  id: string | bigint;
  account_id: string | bigint;
  role: Role;
  email: string;
  name: string;
  password_hash: string;
  active: boolean;
}

interface TokenRow {
  id: string | bigint;
  account_id: string | bigint;
  user_id: string | bigint;
  scopes: string[];
  client_id: string | bigint;
  token_prefix: string;
  created_at: Date;
  expires_at: Date | null;
  used_at: Date | null;
  grant_type: PresentedTokenRow['grantType'];
  refresh_token_prefix: string | null;
  refresh_token_expires_at: Date | null;
  client_scopes: string;
  role: Role;
  email: string;
  name: string;
}

const BASIC_CACHE_TTL_MS = 60_000;
const BASIC_CACHE_MAX = 10_000;
// Advisory-lock namespace of the login throttle (the migration lock and the
// rolling windows use others); any constant that every process shares.
const LOGIN_LOCK_NAMESPACE = 727073692;
// Expired attempts of any email removed per recorded attempt: emails tried once
// (password spraying) would otherwise stay forever.
const PRUNE_BATCH = 10;

export interface AuthenticatorOptions {
  db: Db;
  hashKey: Buffer;
  limits: Pick<Limits, 'loginFailures' | 'loginWindowSeconds'>;
}

/**
 * Turns the Authorization (and X-On-Behalf-Of) headers into a Viewer.
 * Bearer: one indexed query, no KDF. Basic: scrypt, throttled per email in the
 * database, with a short in-process cache of successful verifications.
 */
export class Authenticator {
  // sha256(key, email, password) → the password hash it was verified against
  private readonly basicCache = new Map<string, { userId: string; passwordHash: string; until: number }>();
  // the same cache key → the verification (KDF) of those credentials under way in this process
  private readonly verifying = new Map<string, Promise<UserRow | undefined>>();

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
      const viewer = await this.bearer(value);
      return credentials.onBehalfOf === undefined ? viewer : this.impersonate(viewer, credentials.onBehalfOf);
    }
    if (scheme === 'basic') {
      const viewer = await this.basic(value);
      if (credentials.onBehalfOf !== undefined) throw new ForbiddenError();
      return viewer;
    }
    throw new UnauthenticatedError();
  }

  hashToken(token: string): string {
    return hmacHex(this.options.hashKey, token);
  }

  private async bearer(token: string): Promise<Viewer> {
    if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) throw new UnauthenticatedError('Bearer');
    // One statement: the lookup, and the used_at touch (at most once a minute; the
    // guard, re-checked on the locked row, makes racing processes write once).
    const rows = await this.options.db.sql<TokenRow>(
      `WITH found AS (
         SELECT t.id, t.account_id, t.user_id, t.scopes, t.client_id, t.token_prefix, t.created_at, t.expires_at, t.used_at,
                t.grant_type::text AS grant_type, t.refresh_token_prefix, t.refresh_token_expires_at,
                c.scopes AS client_scopes, u.role::text AS role, u.email, u.name
           FROM oauth_tokens t
           JOIN users u ON u.id = t.user_id AND u.active
           JOIN oauth_clients c ON c.id = t.client_id
          WHERE t.token_hash = $1 AND t.revoked_at IS NULL
            AND (t.expires_at IS NULL OR t.expires_at > now())
       ), touched AS (
         UPDATE oauth_tokens o SET used_at = now()
           FROM found
          WHERE o.id = found.id AND (o.used_at IS NULL OR o.used_at < now() - interval '60 seconds')
         RETURNING o.used_at
       )
       SELECT found.id, found.account_id, found.user_id, found.scopes, found.client_id, found.token_prefix, found.created_at,
              found.expires_at, COALESCE((SELECT used_at FROM touched), found.used_at) AS used_at,
              found.grant_type, found.refresh_token_prefix, found.refresh_token_expires_at,
              found.client_scopes, found.role, found.email, found.name
         FROM found`,
      [this.hashToken(token)],
    );
    const row = rows[0];
    if (!row) throw new UnauthenticatedError('Bearer');
    // A token with any invalid scope is refused outright (seed §4.3 rule 6).
    if (!allScopesValid(row.scopes)) throw new ForbiddenError();
    return {
      accountId: BigInt(row.account_id),
      userId: BigInt(row.user_id),
      role: row.role,
      email: row.email,
      name: row.name,
      via: 'bearer',
      token: {
        id: BigInt(row.id),
        scopes: row.scopes,
        clientScopes: row.client_scopes,
        row: {
          accountId: BigInt(row.account_id), clientId: BigInt(row.client_id), userId: BigInt(row.user_id), tokenPrefix: row.token_prefix,
          scopes: row.scopes, createdAt: row.created_at, expiresAt: row.expires_at, usedAt: row.used_at,
          grantType: row.grant_type, refreshTokenPrefix: row.refresh_token_prefix, refreshTokenExpiresAt: row.refresh_token_expires_at,
        },
      },
    };
  }

  private async impersonate(viewer: Viewer, email: string): Promise<Viewer> {
    const token = viewer.token;
    if (!token || viewer.role !== 'admin' || !token.scopes.includes('impersonate') || email.includes('\0')) throw new ForbiddenError();
    const rows = await this.options.db.sql<UserRow>(
      `SELECT id, account_id, role::text AS role, email, name, password_hash, active
         FROM users WHERE account_id = $1 AND email_key = $2 AND active AND role = 'end_user'`,
      [String(viewer.accountId), email.trim().toLowerCase()],
    );
    const target = rows[0];
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
    };
  }

  private async basic(encoded: string): Promise<Viewer> {
    const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw new UnauthenticatedError();
    const email = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const emailKey = email.trim().toLowerCase();
    // No stored email holds NUL (PostgreSQL text cannot), so such a login names nobody.
    if (emailKey.length > 320 || password.length > 1024 || emailKey.includes('\0')) throw new UnauthenticatedError();

    const failures = await this.recentFailures(emailKey);
    if (failures.count >= this.options.limits.loginFailures) throw this.throttled(failures.retryAfter);
    const users = await this.options.db.sql<UserRow>(
      `SELECT id, account_id, role::text AS role, email, name, password_hash, active
         FROM users WHERE email_key = $1 ORDER BY id`,
      [emailKey],
    );
    const cacheKey = sha256Hex(`${this.options.hashKey.toString('hex')}\0${emailKey}\0${password}`);
    let user = this.cachedMatch(cacheKey, users);
    const inFlight = user ? undefined : this.verifying.get(cacheKey);
    if (inFlight) {
      // The very same credentials are being verified: wait for that KDF rather than run
      // another (a client's burst of concurrent first requests costs one KDF, not one each).
      // Only a success is shared, through the cache; after a failure this is a guess of its own.
      await inFlight.catch(() => undefined);
      user = this.cachedMatch(cacheKey, users);
    }
    const fullVerification = !user;
    if (!user) {
      // A full verification is a guess whose answer the caller learns: it is counted
      // (as a failure until it succeeds) before the KDF runs, atomically across
      // processes, so concurrent guesses cannot get past the limit.
      // (registered before its first await, so that every concurrent twin waits for it)
      const verification = (async () => {
        const attempt = await this.recordAttempt(emailKey);
        if (attempt.id === undefined) throw this.throttled(attempt.retryAfter);
        const found = await this.verify(cacheKey, users, password);
        if (!found) {
          // The window of a failure starts when it is known (as before the KDF was counted).
          await this.options.db.sql('UPDATE login_failures SET created_at = now() WHERE id = $1', [attempt.id]);
          throw new UnauthenticatedError();
        }
        return found;
      })();
      this.verifying.set(cacheKey, verification);
      try {
        user = await verification;
      } finally {
        if (this.verifying.get(cacheKey) === verification) this.verifying.delete(cacheKey);
      }
    }
    // Success clears the count (and the attempt just recorded).
    if (fullVerification || failures.count > 0) await this.options.db.sql('DELETE FROM login_failures WHERE email_key = $1', [emailKey]);
    return {
      accountId: BigInt(user.account_id),
      userId: BigInt(user.id),
      role: user.role,
      email: user.email,
      name: user.name,
      via: 'basic',
    };
  }

  private throttled(retryAfter: number): RateLimitedError {
    return new RateLimitedError(retryAfter, 'Too many failed login attempts; try again later');
  }

  /** The user these exact credentials were verified against within the last minute, if still valid. */
  private cachedMatch(cacheKey: string, users: UserRow[]): UserRow | undefined {
    const cached = this.basicCache.get(cacheKey);
    if (!cached) return undefined;
    if (cached.until > Date.now()) {
      // Valid only while the user still has the very hash it was checked against.
      const same = users.find((u) => String(u.id) === cached.userId && u.active && constantTimeEqual(u.password_hash, cached.passwordHash));
      if (same) return same;
    }
    this.basicCache.delete(cacheKey);
    return undefined;
  }

  private async verify(cacheKey: string, users: UserRow[], password: string): Promise<UserRow | undefined> {
    const active = users.filter((u) => u.active);
    for (const user of active) {
      if (await verifyPassword(password, user.password_hash)) {
        if (this.basicCache.size >= BASIC_CACHE_MAX) this.basicCache.clear();
        this.basicCache.set(cacheKey, { userId: String(user.id), passwordHash: user.password_hash, until: Date.now() + BASIC_CACHE_TTL_MS });
        return user;
      }
    }
    // Unknown (or inactive) email: spend the same time as a wrong password.
    if (active.length === 0) await verifyPassword(password, await dummyPasswordHash());
    return undefined;
  }

  /**
   * The throttle lifts when the limit-th newest failure leaves the window, so
   * Retry-After is computed from that row (database clock).
   */
  private async recentFailures(emailKey: string): Promise<{ count: number; retryAfter: number }> {
    const { loginFailures: limit, loginWindowSeconds: window } = this.options.limits;
    const rows = await this.options.db.sql<{ retry_after: string | number }>(
      `SELECT ceil(extract(epoch FROM (created_at + make_interval(secs => $2) - now()))) AS retry_after
         FROM login_failures
        WHERE email_key = $1 AND created_at > now() - make_interval(secs => $2)
        ORDER BY created_at DESC
        LIMIT $3`,
      [emailKey, window, limit],
    );
    const last = rows[rows.length - 1];
    return { count: rows.length, retryAfter: last ? Math.max(1, Number(last.retry_after)) : 0 };
  }

  /**
   * Records one attempt for the email if fewer than the limit are in the window.
   * Exact across processes: a transaction-scoped advisory lock per email (keyed by
   * its HMAC, so nobody can aim a collision at someone else's lock) serialises the
   * decisions, and the decision statement starts after the lock, so it sees every
   * attempt committed before. The lock is held for this one statement, never
   * during the KDF. The same statement drops the email's attempts that left the
   * window, and the oldest expired ones of any email, so the table stays small.
   */
  private async recordAttempt(emailKey: string): Promise<{ id?: string; retryAfter: number }> {
    const { loginFailures: limit, loginWindowSeconds: window } = this.options.limits;
    // Hex digits only, so the lock statement can go as a literal with BEGIN (one round trip).
    const lockKey = hmacHex(this.options.hashKey, `login-throttle\0${emailKey}`);
    const lock = `SELECT pg_advisory_xact_lock(${LOGIN_LOCK_NAMESPACE}, hashtext('${lockKey}'))`;
    const [row] = await this.options.db.transaction(
      (sql) =>
        sql<{ id: string | bigint | null; retry_after: number | null }>(
          `WITH clock AS (SELECT clock_timestamp() AS now),
          expired AS (
            DELETE FROM login_failures f USING clock
             WHERE f.email_key = $1 AND f.created_at <= clock.now - make_interval(secs => $2::int)
          ),
          oldest_expired AS (
            DELETE FROM login_failures f USING clock
             WHERE f.id IN (SELECT id FROM login_failures ORDER BY id LIMIT $4::int FOR UPDATE SKIP LOCKED)
               AND f.email_key <> $1 AND f.created_at <= clock.now - make_interval(secs => $2::int)
          ),
          recent AS (
            SELECT f.created_at FROM login_failures f, clock
             WHERE f.email_key = $1 AND f.created_at > clock.now - make_interval(secs => $2::int)
             ORDER BY f.created_at DESC LIMIT $3::int
          ),
          counted AS (
            SELECT count(recent.created_at)::int AS used,
                   GREATEST(1, ceil(extract(epoch FROM min(recent.created_at) + make_interval(secs => $2::int) - clock.now)))::int AS retry_after
              FROM clock LEFT JOIN recent ON true
             GROUP BY clock.now
          ),
          recorded AS (
            INSERT INTO login_failures (email_key, created_at)
            SELECT $1, clock.now FROM counted, clock WHERE counted.used < $3::int
            RETURNING id
          )
          SELECT (SELECT id FROM recorded) AS id, retry_after FROM counted`,
          [emailKey, window, limit, PRUNE_BATCH],
        ),
      lock,
    );
    return { id: row.id === null ? undefined : String(row.id), retryAfter: row.retry_after ?? 1 };
  }
}
