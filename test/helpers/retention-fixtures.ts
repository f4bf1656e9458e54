import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/create-db';
import { hmacHex, randomUrlSafe } from '../../src/domain/crypto';
import { UNUSABLE_PASSWORD_HASH } from '../../src/domain/directory/user.repository';
import { TEST_HASH_KEY } from './test-app';

// Rows of every table the retention purge visits, written straight into the database
// with the times a test chooses (the service never writes a token revoked eight days
// ago): for test/retention.test.ts and test/retention.property.test.ts.

type Sql = Db['sql'];
type Time = Date | null;

export interface RetentionBase {
  accountId: string;
  userId: string;
  /** a public client of the user's account (refreshes need no secret) */
  clientId: string;
  clientIdentifier: string;
  webhookId: string;
  phoneNumberId: string;
}

const one = async (sql: Sql, text: string, params: unknown[]) => String((await sql<{ id: string | number }>(text, params))[0].id);

/** An account with an admin, a public client acting as them, a webhook and a voice line. */
export async function seedRetentionBase(sql: Sql, label: string): Promise<RetentionBase> {
  const accountId = await one(sql, 'INSERT INTO accounts (name) VALUES ($1) RETURNING id', [`retention-${label}`]);
  const email = `retention-${label}@example.com`;
  const userId = await one(sql, "INSERT INTO users (account_id, name, email, email_key, role, password_hash) VALUES ($1, $2, $3, $3, 'admin', $4) RETURNING id", [
    accountId, `Admin ${label}`, email, UNUSABLE_PASSWORD_HASH,
  ]);
  const clientIdentifier = `retention-client-${label}-${randomUrlSafe(6)}`;
  const clientId = await one(
    sql,
    `INSERT INTO oauth_clients (account_id, name, identifier, client_type, scopes, redirect_uris, agent_id)
     VALUES ($1, 'Retention client', $2, 'public', 'read write', ARRAY['https://example.com/cb'], $3) RETURNING id`,
    [accountId, clientIdentifier, userId],
  );
  const webhookId = await one(
    sql,
    `INSERT INTO webhooks (account_id, name, endpoint, http_method, request_format, status, signing_secret)
     VALUES ($1, 'Retention hook', 'https://hooks.example.com/r', 'POST', 'json', 'active', 'sealed') RETURNING id`,
    [accountId],
  );
  const phoneNumberId = await one(sql, "INSERT INTO voice_phone_numbers (account_id, number) VALUES ($1, '+14155550100') RETURNING id", [accountId]);
  return { accountId, userId, clientId, clientIdentifier, webhookId, phoneNumberId };
}

export async function insertGrant(sql: Sql, b: RetentionBase, t: { createdAt: Date; revokedAt?: Time }): Promise<string> {
  return one(sql, "INSERT INTO oauth_grants (account_id, client_id, user_id, scopes, created_at, revoked_at) VALUES ($1, $2, $3, '{read,write}', $4, $5) RETURNING id", [
    b.accountId, b.clientId, b.userId, t.createdAt, t.revokedAt ?? null,
  ]);
}

export async function insertCode(sql: Sql, b: RetentionBase, grantId: string, t: { expiresAt: Date; usedAt?: Time }): Promise<string> {
  return one(
    sql,
    `INSERT INTO oauth_authorization_codes (account_id, grant_id, client_id, code_hash, redirect_uri, created_at, expires_at, used_at)
     VALUES ($1, $2, $3, $4, 'https://example.com/cb', $5::timestamptz - interval '120 seconds', $5, $6) RETURNING id`,
    [b.accountId, grantId, b.clientId, randomUrlSafe(24), t.expiresAt, t.usedAt ?? null],
  );
}

export interface TokenTimes {
  expiresAt?: Time;
  refreshExpiresAt?: Time;
  revokedAt?: Time;
  grantId?: string | null;
}

/** A token with its plaintexts (the access token; the refresh token when it has an expiry). */
export async function insertToken(sql: Sql, b: RetentionBase, t: TokenTimes): Promise<{ id: string; token: string; refreshToken: string | null }> {
  const token = randomUrlSafe(32);
  const refreshToken = t.refreshExpiresAt ? randomUrlSafe(32) : null;
  const id = await one(
    sql,
    `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes, expires_at, revoked_at, grant_type, grant_id,
                               refresh_token_hash, refresh_token_prefix, refresh_token_expires_at)
     VALUES ($1, $2, $3, $4, $5, '{read,write}', $6, $7, CASE WHEN $8::bigint IS NULL THEN NULL ELSE 'authorization_code'::"OAuthGrantType" END, $8,
             $9, $10, $11) RETURNING id`,
    [
      b.accountId, b.clientId, b.userId, hmacHex(TEST_HASH_KEY, token), token.slice(0, 10), t.expiresAt ?? null, t.revokedAt ?? null, t.grantId ?? null,
      refreshToken && hmacHex(TEST_HASH_KEY, refreshToken), refreshToken?.slice(0, 10) ?? null, t.refreshExpiresAt ?? null,
    ],
  );
  return { id, token, refreshToken };
}

export async function insertSecret(sql: Sql, b: RetentionBase, expiresAt: Time): Promise<string> {
  return one(sql, "INSERT INTO oauth_client_secrets (account_id, client_id, secret_hash, secret_prefix, expires_at) VALUES ($1, $2, $3, 'xxxxxxxxxx', $4) RETURNING id", [
    b.accountId, b.clientId, randomUrlSafe(24), expiresAt,
  ]);
}

export async function insertRateHit(sql: Sql, expiresAt: Date): Promise<string> {
  return one(sql, "INSERT INTO rate_window_hits (key, created_at, expires_at) VALUES ($1, $2::timestamptz - interval '5 minutes', $2) RETURNING id", [
    `retention:${randomUrlSafe(6)}`, expiresAt,
  ]);
}

export async function insertTokenCount(sql: Sql, b: RetentionBase, endsAt: Date, shard: number): Promise<void> {
  await sql('INSERT INTO oauth_client_token_counts (account_id, client_id, ends_at, shard, issued) VALUES ($1, $2, $3, $4, 1)', [b.accountId, b.clientId, endsAt, shard]);
}

export async function insertEvent(sql: Sql, b: RetentionBase, time: Date): Promise<string> {
  return one(
    sql,
    `INSERT INTO events (account_id, type, subject, detail, time, zendesk_event_version)
     VALUES ($1, 'zen:event-type:oauth_token.revoked', 'zen:oauth_token:1', '{}', $2, '2022-06-20') RETURNING id`,
    [b.accountId, time],
  );
}

/** An invocation of the base's webhook (with one attempt); `completedAt` null while unfinished. */
export async function insertInvocation(
  sql: Sql, b: RetentionBase, t: { eventId?: string; status: 'pending' | 'retrying' | 'success' | 'failed'; createdAt: Date; completedAt: Time },
): Promise<string> {
  const id = await one(
    sql,
    `INSERT INTO webhook_invocations (account_id, webhook_id, event_id, event_type, status, attempts, created_at, updated_at, completed_at)
     VALUES ($1, $2, $3, 'zen:event-type:oauth_token.revoked', $4, 1, $5::timestamptz, coalesce($6::timestamptz, $5::timestamptz), $6::timestamptz) RETURNING id`,
    [b.accountId, b.webhookId, t.eventId ?? randomUUID(), t.status, t.createdAt, t.completedAt],
  );
  await sql('INSERT INTO webhook_invocation_attempts (account_id, invocation_id, started_at, duration_ms, status_code) VALUES ($1, $2, $3, 5, 200)', [b.accountId, id, t.createdAt]);
  return id;
}

/** A job of the service's own (no account): dead since `deadAt`, or pending. */
export async function insertJob(sql: Sql, t: { kind?: string; deadAt: Time; createdAt?: Date; payload?: Record<string, unknown> }): Promise<string> {
  return one(sql, 'INSERT INTO jobs (kind, payload, dead_at, created_at, run_at) VALUES ($1, $2::jsonb, $3, coalesce($4, now()), coalesce($4, now())) RETURNING id', [
    t.kind ?? 'retention-test', JSON.stringify(t.payload ?? {}), t.deadAt, t.createdAt ?? null,
  ]);
}

export async function insertAudit(sql: Sql, b: RetentionBase, createdAt: Date): Promise<string> {
  return one(
    sql,
    `INSERT INTO audit_logs (account_id, actor_name, action, source_type, source_id, source_label, changed_fields, change_description, via, created_at)
     VALUES ($1, 'System', 'update', 'user', 1, 'someone', '{}', 'retention test', 'system', $2) RETURNING id`,
    [b.accountId, createdAt],
  );
}

/** A callback request (with one history step) in `status`, with these times. */
export async function insertCallback(
  sql: Sql, b: RetentionBase, t: { status: string; createdAt: Date; updatedAt?: Time; completedAt?: Time },
): Promise<string> {
  const id = await one(
    sql,
    `INSERT INTO callback_requests (account_id, phone_number_id, requester_phone_number, requested_group_ids, routed_group_ids, status, created_at, updated_at, completed_at)
     VALUES ($1, $2, '+14155550199', '{}', '{}', $3, $4, $5, $6) RETURNING id`,
    [b.accountId, b.phoneNumberId, t.status, t.createdAt, t.updatedAt ?? null, t.completedAt ?? null],
  );
  await sql("INSERT INTO callback_request_history (account_id, callback_request_id, status, at) VALUES ($1, $2, 'queued', $3)", [b.accountId, id, t.createdAt]);
  return id;
}

/** The ids left in a table (of the base's account where the table has one). */
/** A sign-in session of the base's user, ending (signed out) or expiring when the test says. */
export async function insertSession(sql: Sql, b: RetentionBase, t: { expiresAt: Date; endedAt?: Time }): Promise<string> {
  return one(
    sql,
    `INSERT INTO oauth_sessions (account_id, user_id, token_hash, password_changed_at, created_at, expires_at, ended_at)
     SELECT $1, $2, $3, u.password_changed_at, $4::timestamptz - interval '15 minutes', $4, $5 FROM users u WHERE u.id = $2 RETURNING id`,
    [b.accountId, b.userId, hmacHex(TEST_HASH_KEY, randomUrlSafe(32)), t.expiresAt, t.endedAt ?? null],
  );
}

export async function idsOf(sql: Sql, table: string, accountId?: string): Promise<string[]> {
  const where = accountId === undefined ? '' : ' WHERE account_id = $1';
  const rows = await sql<{ id: string | number }>(`SELECT id::text AS id FROM ${table}${where} ORDER BY id`, accountId === undefined ? [] : [accountId]);
  return rows.map((r) => String(r.id));
}
