import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import { SECRET_PREFIX_LENGTH, type NewSecret } from './oauth-client.repository';

// The only module that writes oauth_client_secrets: a client's current secret
// (expires_at null) and, after a rotation with a grace period, the previous one
// until it expires. Reads for a viewer are scoped to the account (the policy's
// row scope); every record goes through toRecord(), the one row mapper.

export interface OAuthClientSecretRecord {
  id: bigint;
  clientId: bigint;
  /** the first 10 characters */
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** null for the current secret */
  expiresAt: Date | null;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; client_id: Int8; secret_prefix: string; created_at: Date; last_used_at: Date | null; expires_at: Date | null;
}
const COLUMNS = 's.id, s.client_id, s.secret_prefix, s.created_at, s.last_used_at, s.expires_at';

function toRecord(r: SqlRow): OAuthClientSecretRecord {
  return { id: BigInt(r.id), clientId: BigInt(r.client_id), prefix: r.secret_prefix, createdAt: r.created_at, lastUsedAt: r.last_used_at, expiresAt: r.expires_at };
}

/** Most previous secrets a rotation can keep alive: 7 days (docs/api.md, "Client secret rotation"). */
export const MAX_GRACE_PERIOD_SECONDS = 604_800;

export class OAuthClientSecretRepository {
  constructor(private readonly db: TenantSql) {}

  /** The first secret of a client of the account just created (same transaction). */
  async insertFirst(client: { id: bigint; accountId: bigint }, secret: NewSecret): Promise<void> {
    await this.db.query(
      client,
      'INSERT INTO oauth_client_secrets (account_id, client_id, secret_hash, secret_prefix) SELECT c.account_id, c.id, $3, $4 FROM oauth_clients c WHERE c.account_id = $1 AND c.id = $2',
      [String(client.id), secret.secretHash, secret.secret.slice(0, SECRET_PREFIX_LENGTH)],
    );
  }

  /**
   * A new current secret for a client of the scope. With a grace period, the
   * secret current until now stays valid for that many seconds; any older one
   * (still in an earlier grace period) ends at once, so there are at most two.
   * Without one, every previous secret ends at once. One statement; the client's
   * row lock serialises concurrent rotations. False when the scope has no such client.
   */
  async rotate(scope: AccountScope, clientId: bigint, secret: NewSecret, graceSeconds: number): Promise<boolean> {
    const rows = await this.db.query(
      scope,
      `WITH c AS (SELECT id, account_id FROM oauth_clients WHERE account_id = $1 AND id = $2 FOR UPDATE),
       ended AS (
         DELETE FROM oauth_client_secrets s USING c
          WHERE s.client_id = c.id AND (s.expires_at IS NOT NULL OR $5::int = 0)
       ),
       kept AS (
         UPDATE oauth_client_secrets s SET expires_at = now() + make_interval(secs => $5::int) FROM c
          WHERE s.client_id = c.id AND s.expires_at IS NULL AND $5::int > 0
       )
       INSERT INTO oauth_client_secrets (account_id, client_id, secret_hash, secret_prefix)
       SELECT c.account_id, c.id, $3, $4 FROM c RETURNING id`,
      [String(clientId), secret.secretHash, secret.secret.slice(0, SECRET_PREFIX_LENGTH), graceSeconds],
    );
    return rows.length > 0;
  }

  /**
   * Ends every previous secret of a client of the scope now: how many were still
   * valid (0: nothing changed); null when the scope has no such client.
   */
  async endGracePeriod(scope: AccountScope, clientId: bigint): Promise<number | null> {
    const [row] = await this.db.query<{ ended: string | number }>(
      scope,
      `WITH c AS (SELECT id FROM oauth_clients WHERE account_id = $1 AND id = $2),
       ended AS (DELETE FROM oauth_client_secrets s USING c WHERE s.client_id = c.id AND s.expires_at IS NOT NULL RETURNING s.expires_at)
       SELECT (SELECT count(*) FROM ended WHERE expires_at > now()) AS ended FROM c`,
      [String(clientId)],
    );
    return row ? Number(row.ended) : null;
  }

  /** Live secrets (current first, then previous ones) of clients of the scope, in one statement: DataLoader batching. */
  async liveOfClients(scope: AccountScope, clientIds: readonly bigint[]): Promise<OAuthClientSecretRecord[]> {
    const rows = await this.db.query<SqlRow>(
      scope,
      `SELECT ${COLUMNS} FROM oauth_client_secrets s
        WHERE s.account_id = $1 AND s.client_id = ANY($2::bigint[]) AND (s.expires_at IS NULL OR s.expires_at > now())
        ORDER BY s.client_id, s.expires_at IS NOT NULL, s.id DESC`,
      [clientIds.map(String)],
    );
    return rows.map(toRecord);
  }

  /** Records a use at the grant endpoints (the caller does it at most once a minute per secret): a secret of a client of the scope. */
  async touch(scope: AccountScope, id: bigint): Promise<void> {
    await this.db.query(scope, 'UPDATE oauth_client_secrets SET last_used_at = now() WHERE account_id = $1 AND id = $2', [String(id)]);
  }
}
