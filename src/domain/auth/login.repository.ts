import type { TenantSql } from '../../db/tenant-sql';
import type { Role } from './viewer';

// Every statement of a login (basic-login.ts, login-attempt.ts): the credentials' user and the
// login throttle's rolling windows (rate_window_hits rows of login-… keys; the
// table's other keys belong to the callback limit, decided inside the database
// function create_callback_request). The lookup reads users and the windows in
// one statement, so that a Basic request costs one round trip before its KDF.

export interface UserRow {
  id: string | bigint;
  account_id: string | bigint;
  role: Role;
  email: string;
  name: string;
  password_hash: string;
  active: boolean;
}

/** A rolling window of the login throttle: a key (an HMAC, never the email or address) and its limit. */
export interface LoginWindow {
  key: string;
  limit: number;
}

const USER_COLUMNS = 'id, account_id, role::text AS role, email, name, password_hash, active';

export class LoginRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * The one user these credentials can name (on a subdomain host the active user
   * holding the email in that account, on the plain host the one in the account
   * with the lowest id), the email's window of the account the guess counts
   * against (the subdomain's account, or on the plain host the named user's; none
   * when nobody is named), and the hits of each window (the newest `limit`, with
   * the seconds until the oldest of them leaves): one statement, one round trip.
   * The email window's key is `emailKeyPrefix` followed by that account's id, or
   * '-' (loginEmailKey in login-keys.ts); `others` (the address's) follow it.
   *
   * With `apiTokenHash` (a Basic `{email}/token:{token}` sign-in, docs/api.md "API
   * tokens"), the token names the account: the candidate is the active user holding
   * the email in the account of the token with that keyed hash, found only while the
   * account's api_token_access is on (and, on a subdomain host, only a token of that
   * account); the token's last_used_at is touched in the same statement, at most once a
   * minute. The guess counts against the same window as a password guess would (on the
   * plain host, the account of the token's user, else of the lowest account holding
   * the email), so that wrong passwords and wrong tokens count together.
   */
  async lookup(
    email: { emailKey: string; keyPrefix: string; limit: number },
    others: LoginWindow[],
    windowSeconds: number,
    subdomain: string | undefined,
    apiTokenHash?: string,
  ): Promise<{ windows: LoginWindow[]; counts: { used: number; retryAfter: number }[]; candidate?: UserRow; apiTokenId?: string }> {
    const rows = await this.db.crossTenant<{ key: string; lim: number; used: number; retry_after: number | null; api_token_id: string | number | null } & Partial<UserRow>>(
      'signIn',
      `WITH host AS (SELECT a.id FROM accounts a WHERE $5::text IS NOT NULL AND a.subdomain = $5::text),
            tok AS (
              SELECT t.id, t.account_id
                FROM api_tokens t
                JOIN accounts ta ON ta.id = t.account_id AND ta.api_token_access
               WHERE $8::text IS NOT NULL AND t.token_hash = $8::text
                 AND ($5::text IS NULL OR t.account_id = (SELECT id FROM host))),
            cand AS (
              SELECT c.id, c.account_id, c.role::text AS role, c.email, c.name, c.password_hash, c.active
                FROM users c
               WHERE c.email_key = $4 AND c.active AND ($5::text IS NULL OR c.account_id = (SELECT id FROM host))
                 AND ($8::text IS NULL OR c.account_id = (SELECT account_id FROM tok))
               ORDER BY c.account_id
               LIMIT 1),
            anyone AS (
              SELECT c.account_id FROM users c WHERE $8::text IS NOT NULL AND c.email_key = $4 AND c.active ORDER BY c.account_id LIMIT 1),
            touched AS (
              UPDATE api_tokens o SET last_used_at = now()
               WHERE o.id = (SELECT id FROM tok) AND EXISTS (SELECT 1 FROM cand)
                 AND (o.last_used_at IS NULL OR o.last_used_at < now() - interval '60 seconds')
              RETURNING o.id),
            k AS (
              SELECT $6::text || coalesce((CASE WHEN $5::text IS NULL THEN coalesce((SELECT account_id FROM cand), (SELECT account_id FROM anyone)) ELSE (SELECT id FROM host) END)::text, '-') AS key,
                     $7::int AS lim, 0::bigint AS n
              UNION ALL
              SELECT o.key, o.lim, o.n FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS o(key, lim, n))
      SELECT k.key, k.lim, w.used, w.retry_after, u.id, u.account_id, u.role, u.email, u.name, u.password_hash, u.active,
             CASE WHEN k.n = 0 AND u.id IS NOT NULL THEN (SELECT id FROM tok) END AS api_token_id
        FROM k
       CROSS JOIN LATERAL (
          SELECT count(*)::int AS used,
                 GREATEST(1, ceil(extract(epoch FROM min(r.created_at) + make_interval(secs => $3::int) - now())))::int AS retry_after
            FROM (SELECT h.created_at FROM rate_window_hits h
                   WHERE h.key = k.key AND h.created_at > now() - make_interval(secs => $3::int)
                   ORDER BY h.created_at DESC
                   LIMIT k.lim) r
        ) w
        LEFT JOIN cand u ON k.n = 0
       ORDER BY k.n`,
      [others.map((w) => w.key), others.map((w) => w.limit), windowSeconds, email.emailKey, subdomain ?? null, email.keyPrefix, email.limit, apiTokenHash ?? null],
    );
    const first = rows[0];
    const candidate = first?.id === null || first?.id === undefined ? undefined : (first as UserRow);
    return {
      windows: rows.map((r) => ({ key: r.key, limit: Number(r.lim) })),
      counts: rows.map((r) => ({ used: Number(r.used), retryAfter: r.retry_after ?? 1 })),
      candidate,
      ...(candidate && first.api_token_id !== null && first.api_token_id !== undefined ? { apiTokenId: String(first.api_token_id) } : {}),
    };
  }

  /**
   * Records one attempt in every window, or in none: rate_window_take on each key,
   * the address's before the email's (the email's runs only when the address's
   * allowed: the lateral subquery's filter), in one statement, whose transaction
   * holds both keys' advisory locks until it ends; always taking them in the same
   * order cannot deadlock. When one refuses, the hit the other recorded is deleted:
   * a refused attempt is not a new failure. Windows: [email, address?].
   */
  async recordAttempt(windows: LoginWindow[], seconds: number): Promise<{ hits: string[] } | { retryAfter: number }> {
    const [email, address] = windows;
    type Row = { a_allowed: boolean; a_hit: string | number | null; a_retry: number | null; e_allowed: boolean | null; e_hit: string | number | null; e_retry: number | null };
    const [row] =
      address === undefined
        ? await this.db.crossTenant<Row>(
            'loginThrottle',
            `SELECT true AS a_allowed, NULL::bigint AS a_hit, NULL::int AS a_retry, e.allowed AS e_allowed, e.hit_id AS e_hit, e.retry_after AS e_retry
               FROM rate_window_take($1::text, $2::int, $3::int) e`,
            [email.key, email.limit, seconds],
          )
        : await this.db.crossTenant<Row>(
            'loginThrottle',
            `SELECT a.allowed AS a_allowed, a.hit_id AS a_hit, a.retry_after AS a_retry,
                    e.allowed AS e_allowed, e.hit_id AS e_hit, e.retry_after AS e_retry
               FROM rate_window_take($1::text, $2::int, $5::int) a
               LEFT JOIN LATERAL (SELECT * FROM rate_window_take($3::text, $4::int, $5::int) WHERE a.allowed) e ON true`,
            [address.key, address.limit, email.key, email.limit, seconds],
          );
    const hits = [row.e_hit, row.a_hit].filter((id) => id !== null && id !== undefined).map(String);
    if (row.a_allowed && row.e_allowed) return { hits };
    await this.takeBack(hits);
    return { retryAfter: (row.a_allowed ? row.e_retry : row.a_retry) ?? 1 };
  }

  /** A failure's window starts when it is known (after the KDF), not when it was counted. */
  async failedNow(hits: string[], seconds: number): Promise<void> {
    await this.db.crossTenant('loginThrottle', 'UPDATE rate_window_hits SET created_at = now(), expires_at = now() + make_interval(secs => $2::int) WHERE id = ANY($1::bigint[])', [
      hits,
      seconds,
    ]);
  }

  /** Attempts that were no failure (nothing was verified): not counted after all. */
  async takeBack(hits: string[]): Promise<void> {
    if (hits.length > 0) await this.db.crossTenant('loginThrottle', 'DELETE FROM rate_window_hits WHERE id = ANY($1::bigint[])', [hits]);
  }

  /** A success clears the email's window, and of the others only this attempt's hits. */
  async clear(emailWindowKey: string, hits: string[]): Promise<void> {
    await this.db.crossTenant('loginThrottle', 'DELETE FROM rate_window_hits WHERE key = $1 OR id = ANY($2::bigint[])', [emailWindowKey, hits]);
  }

  /** The active end user of the account with this email (X-On-Behalf-Of). */
  async activeEndUser(accountId: bigint, emailKey: string): Promise<UserRow | undefined> {
    const [row] = await this.db.query<UserRow>({ accountId }, `SELECT ${USER_COLUMNS} FROM users WHERE account_id = $1 AND email_key = $2 AND active AND role = 'end_user'`, [
      emailKey,
    ]);
    return row;
  }
}
