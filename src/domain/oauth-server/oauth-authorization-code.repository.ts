import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';

// The only module that reads or writes oauth_authorization_codes: keyed hashes
// of single-use codes, each bound to its grant, client, redirect URI and PKCE
// challenge, valid CODE_LIFETIME_SECONDS.

export const CODE_LIFETIME_SECONDS = 120;

export interface AuthorizationCodeRow {
  id: bigint;
  grantId: bigint;
  clientId: bigint;
  redirectUri: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  /** a remembered consent's scopes (within the grant's); null: the grant's */
  scopes: string[] | null;
  expired: boolean;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; grant_id: Int8; client_id: Int8; redirect_uri: string; code_challenge: string | null; code_challenge_method: string | null; scopes: string[] | null;
  expired: boolean;
}
const COLUMNS = 'k.id, k.grant_id, k.client_id, k.redirect_uri, k.code_challenge, k.code_challenge_method, k.scopes, k.expires_at <= now() AS expired';

function toRow(r: SqlRow): AuthorizationCodeRow {
  return {
    id: BigInt(r.id), grantId: BigInt(r.grant_id), clientId: BigInt(r.client_id), redirectUri: r.redirect_uri,
    codeChallenge: r.code_challenge, codeChallengeMethod: r.code_challenge_method, scopes: r.scopes, expired: r.expired,
  };
}

export class OAuthAuthorizationCodeRepository {
  constructor(private readonly db: TenantSql) {}

  /**
   * A code of a grant of the account, for the grant's client; its expiry, or null when the
   * account has no such grant. `scopes` (a remembered consent's): what the code's token gets,
   * within the grant's (else nothing is inserted); absent, the grant's.
   */
  async insert(row: {
    accountId: bigint; grantId: bigint; clientId: bigint; codeHash: string; redirectUri: string; codeChallenge: string | null; codeChallengeMethod: string | null;
    scopes?: string[];
  }): Promise<Date | null> {
    const [inserted] = await this.db.query<{ expires_at: Date }>(
      row,
      `INSERT INTO oauth_authorization_codes (account_id, grant_id, client_id, code_hash, redirect_uri, code_challenge, code_challenge_method, expires_at, scopes)
       SELECT g.account_id, g.id, g.client_id, $4, $5, $6, $7, now() + make_interval(secs => $8::int), $9::text[]
         FROM oauth_grants g WHERE g.account_id = $1 AND g.id = $2 AND g.client_id = $3 AND ($9::text[] IS NULL OR g.scopes @> $9::text[])
       RETURNING expires_at`,
      [String(row.grantId), String(row.clientId), row.codeHash, row.redirectUri, row.codeChallenge, row.codeChallengeMethod, CODE_LIFETIME_SECONDS, row.scopes ?? null],
    );
    return inserted ? inserted.expires_at : null;
  }

  /**
   * Uses the code: marks it used if it was not, atomically across processes (the
   * row lock makes the second of two racing statements find it used). `consumed`
   * is the code when this call used it; `replayed` is its grant when the code
   * exists but was used before (RFC 6749 §4.1.2: revoke what it issued). Only a
   * code of the scope's account (the authenticated client's) and of `clientId` is
   * found: another client presenting it, used or not, finds nothing and changes
   * nothing (it must not be able to revoke someone's grant).
   */
  async consume(scope: AccountScope, codeHash: string, clientId: bigint): Promise<{ consumed?: AuthorizationCodeRow; replayed?: bigint }> {
    const rows = await this.db.query<SqlRow & { consumed: boolean }>(
      scope,
      `WITH found AS (SELECT ${COLUMNS} FROM oauth_authorization_codes k WHERE k.account_id = $1 AND k.code_hash = $2 AND k.client_id = $3),
       used AS (
         UPDATE oauth_authorization_codes k SET used_at = now() FROM found
          WHERE k.id = found.id AND k.used_at IS NULL
         RETURNING k.id
       )
       SELECT found.*, EXISTS (SELECT 1 FROM used) AS consumed FROM found`,
      [codeHash, String(clientId)],
    );
    const row = rows[0];
    if (!row) return {};
    return row.consumed ? { consumed: toRow(row) } : { replayed: BigInt(row.grant_id) };
  }
}
