import { constantTimeEqual } from '../crypto';
import type { LiveSecret, OAuthClientRecord } from './oauth-client.repository';

// The grant endpoints' client cache (docs/api.md, "Client authentication"; bench
// scenarios 9, 10 and 11). A client that authenticated with a secret is kept in its
// process for ENTRY_SECONDS with its live secrets' keyed hashes, so the next request
// of that client needs no lookup: its grant is then one statement. The cache is never
// trusted on its own: the statement that uses a cached client also checks, in SQL, that
// the client still has the type and scopes it was read with and that the matched secret
// is still live (clientCheckSql). When not, it changes nothing and the endpoint looks the
// client up again. So a regenerated secret, an ended grace period, a changed client or a
// deleted one takes effect on the very next request in every process, with no window and
// no message between processes.

/**
 * How long an entry is used before the client is read again (its secrets' expiry is
 * checked on every use). The lookup records a secret's use when the last record is a
 * minute old, so with the cache a secret's last_used_at is at most two minutes behind.
 */
const ENTRY_SECONDS = 60;
/** At most this many clients per process; the oldest entry goes first. */
const MAX_ENTRIES = 2000;

interface Entry {
  client: OAuthClientRecord;
  secrets: readonly LiveSecret[];
  at: number;
}

/**
 * What the statement using a cached client checks first: the client still exists in
 * the scope with this type and these scopes, and `secretId` is still one of its live
 * secrets. A fresh lookup has no check.
 */
export interface ClientCheck {
  clientId: bigint;
  clientType: OAuthClientRecord['clientType'];
  scopes: string;
  secretId: bigint;
}

/** The cached client a statement was given no longer holds (changed, deleted, its secret regenerated): the statement changed nothing; authenticate again without the cache. */
export class StaleClientError extends Error {
  constructor() {
    super('the cached client changed');
  }
}

/** The parameters of clientCheckSql, in its order (all null without a check). */
export function clientCheckParams(check: ClientCheck | undefined): unknown[] {
  return check ? [String(check.clientId), check.clientType, check.scopes, String(check.secretId)] : [null, null, null, null];
}

/**
 * A boolean SQL expression over parameters $n..$n+3 (clientCheckParams) in the account
 * $1: true without a check, else whether the cached client still holds.
 */
export function clientCheckSql(n: number): string {
  return `($${n}::bigint IS NULL OR EXISTS (
    SELECT 1 FROM oauth_clients cc JOIN oauth_client_secrets cs ON cs.client_id = cc.id
     WHERE cc.account_id = $1 AND cc.id = $${n}::bigint AND cc.client_type = $${n + 1}::"OAuthClientType" AND cc.scopes = $${n + 2}::text
       AND cs.id = $${n + 3}::bigint AND (cs.expires_at IS NULL OR cs.expires_at > now())))`;
}

/** The client of a grant request as the cache found it, and the check of the secret it matched. */
interface CacheHit {
  client: OAuthClientRecord;
  check: ClientCheck;
}

export class ClientGrantCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * The cached client under `key` whose live secret has the keyed hash `presented`
   * (every cached secret compared in constant time); undefined when none.
   */
  match(key: string, presented: string): CacheHit | undefined {
    const entry = this.entries.get(key);
    const now = this.now();
    if (!entry) return undefined;
    if (now - entry.at > ENTRY_SECONDS * 1000) {
      this.entries.delete(key);
      return undefined;
    }
    let matched: LiveSecret | undefined;
    for (const secret of entry.secrets) if (constantTimeEqual(presented, secret.hash) && (secret.expiresAt === null || secret.expiresAt > now)) matched = secret;
    if (!matched) return undefined;
    const { client } = entry;
    return { client, check: { clientId: client.id, clientType: client.clientType, scopes: client.scopes, secretId: matched.id } };
  }

  /** Keeps a client just read, with its live secrets. */
  store(key: string, client: OAuthClientRecord, secrets: readonly LiveSecret[]): void {
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { client, secrets, at: this.now() });
  }

  /** Drops the entry under `key` (its statement found the client changed). */
  forget(key: string): void {
    this.entries.delete(key);
  }
}
