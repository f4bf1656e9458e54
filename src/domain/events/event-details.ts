import type { OAuthClientRecord } from '../oauth-clients/oauth-client.repository';
import type { UserRecord } from '../directory/user.repository';
import type { OAuthTokenRecord } from '../oauth-tokens/oauth-token.record';
import type { ApiTokenRecord } from '../api-tokens/api-token.repository';

// An event's `detail`: the resource as the REST API shows it (docs/api.md,
// "Events"), built from the record the change returned. Never a secret or a full
// token: a client's secret is its first 10 characters and "...", a token its
// first 10 characters, as list and show give them. The `url` fields are left
// out: they depend on the host a request came in by, and an event has none.
// Tokens changed in one statement build the same object in SQL (tokenDetailSql).

const SHOWN_PREFIX = 10;

/** ISO 8601 UTC with seconds, as the REST API writes times. */
export function isoSeconds(d: Date | null): string | null {
  return d === null ? null : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A secret as list/show give it, whether `shown` is the full one (right after create or regenerate) or already truncated. */
function truncated(shown: string): string {
  return shown.endsWith('...') && shown.length <= SHOWN_PREFIX + 3 ? shown : `${shown.slice(0, SHOWN_PREFIX)}...`;
}

export function clientDetail(c: OAuthClientRecord): Record<string, unknown> {
  return {
    id: Number(c.id), name: c.name, company: c.company, client_identifier: c.identifier, client_secret: truncated(c.clientSecret),
    client_type: c.clientType, redirect_uris: c.redirectUris.join(' '), scopes: c.scopes, agent_id: c.agentId === null ? null : Number(c.agentId),
    create_date: isoSeconds(c.createdAt), update_date: isoSeconds(c.updatedAt),
  };
}

export function userDetail(u: UserRecord): Record<string, unknown> {
  return {
    id: Number(u.id), name: u.name, email: u.email, role: u.role, active: u.active, created_at: isoSeconds(u.createdAt), updated_at: isoSeconds(u.updatedAt),
  };
}

export function tokenDetail(t: OAuthTokenRecord): Record<string, unknown> {
  return {
    id: Number(t.id), token: t.token.slice(0, SHOWN_PREFIX), client_id: t.clientId === null ? null : Number(t.clientId), user_id: Number(t.userId),
    scopes: t.scopes, created_at: isoSeconds(t.createdAt), expires_at: isoSeconds(t.expiresAt), used_at: isoSeconds(t.usedAt),
    refresh_token: t.refreshToken === null ? null : t.refreshToken.slice(0, SHOWN_PREFIX), refresh_token_expires_at: isoSeconds(t.refreshTokenExpiresAt),
  };
}

const isoSql = (expr: string) => `to_char(${expr} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** tokenDetail in SQL, over a row of oauth_tokens' columns (alias `a`): for the statements that change tokens and write their events. */
export function tokenDetailSql(a: string): string {
  return (
    `jsonb_build_object('id', ${a}.id, 'token', ${a}.token_prefix, 'client_id', ${a}.client_id, 'user_id', ${a}.user_id, ` +
    `'scopes', coalesce(${a}.scopes, '{}'), 'created_at', ${isoSql(`${a}.created_at`)}, 'expires_at', ${isoSql(`${a}.expires_at`)}, ` +
    `'used_at', ${isoSql(`${a}.used_at`)}, 'refresh_token', ${a}.refresh_token_prefix, 'refresh_token_expires_at', ${isoSql(`${a}.refresh_token_expires_at`)})`
  );
}

/**
 * An update's `event`: the previous and current values of the fields that
 * changed, as the REST API shows them (fields that are not shown, such as a
 * password or a secret, are left out: their change is said by `changed_fields`).
 */
export function changeEvent(changed: readonly string[], previous: Record<string, unknown>, current: Record<string, unknown>): Record<string, unknown> {
  const shown = changed.filter((f) => f in current && f !== 'client_secret');
  const pick = (from: Record<string, unknown>) => Object.fromEntries(shown.map((f) => [f, from[f] ?? null]));
  return { changed_fields: [...changed], previous: pick(previous), current: pick(current) };
}

/** An API token as a list shows it: its first characters and "...", never the token. */
export function apiTokenDetail(t: ApiTokenRecord): Record<string, unknown> {
  return {
    id: Number(t.id), description: t.description, token: truncated(t.token),
    created_by: t.createdBy === null ? null : Number(t.createdBy), created_at: isoSeconds(t.createdAt), last_used_at: isoSeconds(t.lastUsedAt),
  };
}
