import type { TenantSql } from '../../db/tenant-sql';
import type { AccountScope } from '../authorization';
import type { ValidOAuthClientFields } from './oauth-client.validation';

// The only module that reads or writes oauth_clients. Every statement is
// scoped to the account (the policy's row scope, domain/authorization.ts;
// TenantSql binds it), but the grant-endpoint lookup by identifier, which comes
// before any account is known; every record goes through toRecord(), the one row mapper. Secrets live
// in oauth_client_secrets (oauth-client-secret.repository.ts); the current one's
// prefix is read here for display.

export interface OAuthClientRecord {
  id: bigint;
  accountId: bigint;
  name: string;
  company: string | null;
  identifier: string;
  /** the full secret right after create/regenerate, else its first 10 characters + "..." */
  clientSecret: string;
  clientType: 'public' | 'confidential';
  scopes: string;
  redirectUris: string[];
  agentId: bigint | null;
  createdAt: Date;
  updatedAt: Date | null;
  description: string | null;
  logoUrl: string | null;
}

export const SECRET_PREFIX_LENGTH = 10;

function truncateSecret(prefix: string): string {
  return `${prefix}...`;
}

type Int8 = string | number | bigint;
interface SqlRow {
  id: Int8; account_id: Int8; name: string; company: string | null; identifier: string; secret_prefix: string | null;
  client_type: 'public' | 'confidential'; scopes: string; redirect_uris: string[]; agent_id: Int8 | null;
  created_at: Date; updated_at: Date | null; description: string | null; logo_url: string | null;
}
const COLUMNS =
  'c.id, c.account_id, c.name, c.company, c.identifier, c.client_type::text AS client_type, c.scopes, c.redirect_uris, c.agent_id, c.created_at, c.updated_at, c.description, c.logo_url, ' +
  '(SELECT s.secret_prefix FROM oauth_client_secrets s WHERE s.client_id = c.id AND s.expires_at IS NULL ORDER BY s.id DESC LIMIT 1) AS secret_prefix';

function toRecord(r: SqlRow, fullSecret?: string): OAuthClientRecord {
  return {
    id: BigInt(r.id), accountId: BigInt(r.account_id), name: r.name, company: r.company, identifier: r.identifier,
    clientSecret: fullSecret ?? truncateSecret(r.secret_prefix ?? ''), clientType: r.client_type, scopes: r.scopes,
    redirectUris: r.redirect_uris, agentId: r.agent_id === null ? null : BigInt(r.agent_id), createdAt: r.created_at, updatedAt: r.updated_at,
    description: r.description, logoUrl: r.logo_url,
  };
}

export interface NewSecret {
  secret: string;
  secretHash: string;
}

/** A live secret of a client, as the grant endpoints check it. */
export interface LiveSecret {
  id: bigint;
  hash: string;
  /** last used more than a minute ago (or never): worth recording this use */
  stale: boolean;
  /** when it stops working (epoch milliseconds; a previous secret in its grace period), null for the current one */
  expiresAt: number | null;
}

/**
 * Writable columns (named as REST names the fields; description and logo_url as Zendesk
 * Support names them), in a fixed order so that update has one statement text. The
 * identifier is not among them: it never changes after create.
 */
const WRITABLE = [
  ['name', 'name', ''],
  ['company', 'company', ''],
  ['clientType', 'client_type', '::"OAuthClientType"'],
  ['scopes', 'scopes', ''],
  ['redirectUris', 'redirect_uris', '::text[]'],
  ['description', 'description', ''],
  ['logoUrl', 'logo_url', ''],
] as const;

export class OAuthClientRepository {
  constructor(private readonly db: TenantSql) {}

  async list(scope: AccountScope): Promise<OAuthClientRecord[]> {
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM oauth_clients c WHERE c.account_id = $1 ORDER BY c.id`);
    return rows.map((r) => toRecord(r));
  }

  async find(scope: AccountScope, id: bigint): Promise<OAuthClientRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM oauth_clients c WHERE c.account_id = $1 AND c.id = $2`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** Clients by id within the scope, for DataLoader batching. */
  async findMany(scope: AccountScope, ids: readonly bigint[]): Promise<OAuthClientRecord[]> {
    const rows = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM oauth_clients c WHERE c.account_id = $1 AND c.id = ANY($2::bigint[])`, [ids.map(String)]);
    return rows.map((r) => toRecord(r));
  }

  /** Stores a client; its first secret is stored beside it, in the caller's transaction (OAuthClientService.create). */
  async insert(
    scope: AccountScope & { agentId: bigint },
    fields: Required<ValidOAuthClientFields>,
    secret: string,
  ): Promise<OAuthClientRecord> {
    const [row] = await this.db.query<SqlRow>(
      scope,
      `INSERT INTO oauth_clients AS c (account_id, name, company, client_type, scopes, redirect_uris, identifier, agent_id, description, logo_url)
       VALUES ($1, $2, $3, $4::"OAuthClientType", $5, $6::text[], $7, $8, $9, $10)
       RETURNING ${COLUMNS}`,
      [fields.name, fields.company, fields.clientType, fields.scopes, fields.redirectUris, fields.identifier, String(scope.agentId), fields.description, fields.logoUrl],
    );
    return toRecord(row, secret);
  }

  /**
   * Sets the given fields (and update_date); with the names of the columns whose
   * value changed (REST's field names), for the audit log. null when the scope has
   * no such client. One statement text for any subset.
   */
  async update(
    scope: AccountScope, id: bigint, fields: ValidOAuthClientFields,
  ): Promise<{ client: OAuthClientRecord; changed: string[]; previous: Record<string, unknown> } | null> {
    const params: unknown[] = [String(id)];
    const sets = WRITABLE.map(([key, column, cast]) => {
      const given = fields[key] !== undefined;
      params.push(given, given ? fields[key] : null);
      return `${column} = CASE WHEN $${params.length}::boolean THEN $${params.length + 1}${cast} ELSE c.${column} END`;
    });
    // RETURNING sees the new row as c and the locked previous one as old
    const changed = WRITABLE.map(([, column]) => `CASE WHEN c.${column} IS DISTINCT FROM old.${column} THEN '${column}' END`).join(', ');
    // the previous values of the writable columns, for the event (never a secret: those live in oauth_client_secrets)
    const previous = WRITABLE.map(([, column]) => `'${column}', old.${column}`).join(', ');
    const [row] = await this.db.query<SqlRow & { changed: string[]; previous: Record<string, unknown> }>(
      scope,
      `WITH old AS (SELECT * FROM oauth_clients WHERE account_id = $1 AND id = $2 FOR UPDATE)
       UPDATE oauth_clients c SET ${sets.join(', ')}, updated_at = now() FROM old WHERE c.id = old.id
       RETURNING ${COLUMNS}, array_remove(ARRAY[${changed}]::text[], NULL) AS changed, jsonb_build_object(${previous}) AS previous`,
      params,
    );
    return row ? { client: toRecord(row), changed: row.changed, previous: row.previous } : null;
  }

  /** Marks a new secret in update_date; the record shows `secret` in full. null when the scope has no such client. */
  async touchForNewSecret(scope: AccountScope, id: bigint, secret: string): Promise<OAuthClientRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `UPDATE oauth_clients c SET updated_at = now() WHERE c.account_id = $1 AND c.id = $2 RETURNING ${COLUMNS}`, [String(id)]);
    return row ? toRecord(row, secret) : null;
  }

  /**
   * The first step of deleting a client, in the caller's transaction: locks the
   * scope's client (as its audit record and event show it); null when the scope
   * has no such client. The caller revokes its tokens, then delete().
   */
  async lockForDelete(scope: AccountScope, id: bigint): Promise<OAuthClientRecord | null> {
    const [row] = await this.db.query<SqlRow>(scope, `SELECT ${COLUMNS} FROM oauth_clients c WHERE c.account_id = $1 AND c.id = $2 FOR UPDATE OF c`, [String(id)]);
    return row ? toRecord(row) : null;
  }

  /** Deletes a client locked by lockForDelete (its secrets, grants and codes go with it: ON DELETE CASCADE). */
  async delete(scope: AccountScope, id: bigint): Promise<void> {
    await this.db.query(scope, 'DELETE FROM oauth_clients WHERE account_id = $1 AND id = $2', [String(id)]);
  }

  /**
   * The client with this identifier and its live secrets (current, and previous
   * in a grace period), in one statement: the grant endpoints and the
   * authorization request, before any account is known. With a subdomain (the
   * request came on an account's host), only a client of that account is found.
   * On the plain host, when several accounts hold the identifier (it is unique per
   * account), the oldest client holding it (lowest id): identifiers never change, so
   * an account that takes the same one later can never take over an integration.
   */
  async findByIdentifier(identifier: string, subdomain?: string): Promise<{ client: OAuthClientRecord; secrets: LiveSecret[] } | null> {
    const [row] = await this.db.crossTenant<SqlRow & { secrets: [string, string, boolean, number | null][] | null }>(
      'clientIdentifier',
      `SELECT ${COLUMNS},
              (SELECT json_agg(json_build_array(s.id::text, s.secret_hash, s.last_used_at IS NULL OR s.last_used_at < now() - interval '60 seconds',
                                                floor(extract(epoch FROM s.expires_at) * 1000)) ORDER BY s.id DESC)
                 FROM oauth_client_secrets s WHERE s.client_id = c.id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets
         FROM oauth_clients c
        WHERE c.identifier = $1 AND ($2::text IS NULL OR c.account_id = (SELECT a.id FROM accounts a WHERE a.subdomain = $2::text))
        ORDER BY c.id LIMIT 1`,
      [identifier, subdomain ?? null],
    );
    if (!row) return null;
    return { client: toRecord(row), secrets: (row.secrets ?? []).map(([id, hash, stale, expiresAt]) => ({ id: BigInt(id), hash, stale, expiresAt })) };
  }
}
