import { startOAuthStack, REDIRECT, type OAuthStack } from './helpers/oauth-server';
import { consentAndExchange, refresh, type Consented } from './helpers/authorized-apps';
import type { TestUser } from './helpers/test-app';

// A person's own authorized apps (docs/api.md, "Your authorized apps"), over real
// HTTP: consent through the real authorization pages, then list and revoke with
// REST (GET/DELETE /api/v2/users/me/oauth/grants) and GraphQL (me { authorizedApps },
// revokeAuthorizedApp), for every role.

jest.setTimeout(60_000);

const GRANTS = '/api/v2/users/me/oauth/grants';

describe('your authorized apps', () => {
  let s: OAuthStack;
  let endUser: TestUser;
  let client: { id: number; identifier: string };
  /** another app: its consents are grants of their own (the same app's would be remembered, one grant) */
  let second: { id: number; identifier: string };

  const call = async (method: string, path: string, authorization: string, body?: unknown) => {
    const res = await fetch(`${s.base}${path}`, {
      method, headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const list = async (who: TestUser | string) => {
    const res = await call('GET', GRANTS, typeof who === 'string' ? who : who.basic);
    expect(res.status).toBe(200);
    return res.body.grants as { id: string; kind: string; client: { id: number; name: string; company: string | null }; scopes: string[]; granted_at: string; last_used_at: string | null }[];
  };
  const bearer = (token: string) => `Bearer ${token}`;
  const me = (token: string) => fetch(`${s.base}/api/v2/users/me.json`, { headers: { authorization: bearer(token) } }).then((r) => r.status);
  const graphql = async (query: string, authorization: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(`${s.base}/graphql`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    return (await res.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
  };
  const consent = (who: TestUser, scope?: string): Promise<Consented> => consentAndExchange(s.base, client.identifier, REDIRECT, who, scope);
  const count = async (sql: string, params: unknown[]) => Number((await s.ctx.db.sql<{ n: string }>(sql, params))[0].n);

  beforeAll(async () => {
    s = await startOAuthStack();
    endUser = await s.ctx.createUser(s.admin.accountId, 'end_user');
    const created = await call('POST', '/api/v2/oauth/clients', s.admin.basic, {
      name: 'Dashboard', company: 'Acme', client_type: 'public', scopes: 'read write', redirect_uris: [REDIRECT],
    });
    expect(created.status).toBe(201);
    client = { id: created.body.id, identifier: created.body.client_identifier };
    const other = await call('POST', '/api/v2/oauth/clients', s.admin.basic, { name: 'Second app', client_type: 'public', scopes: 'read write', redirect_uris: [REDIRECT] });
    second = { id: other.body.id, identifier: other.body.client_identifier };
  });
  afterAll(() => s.close());

  it('an end user who allowed an app on the consent page sees it, uses it, and revokes it: access and refresh tokens are refused at once', async () => {
    const before = Date.now();
    const tokens = await consent(endUser);
    expect(await me(tokens.access)).toBe(200);

    const [entry, ...others] = await list(endUser);
    expect(others).toEqual([]);
    expect(entry).toEqual({
      id: expect.stringMatching(/^grant-[1-9][0-9]*$/), kind: 'grant', client: { id: client.id, name: 'Dashboard', company: 'Acme' }, scopes: ['read', 'write'],
      granted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), last_used_at: expect.stringMatching(/Z$/),
    });
    expect(Date.parse(entry.granted_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(Date.parse(entry.last_used_at!)).toBeGreaterThanOrEqual(Date.parse(entry.granted_at));
    // the token itself sees the same list (a read token)
    expect(await list(bearer(tokens.access))).toEqual([entry]);
    expect((await call('GET', `${GRANTS}.json`, endUser.basic)).body).toEqual({ grants: [entry] });

    // GraphQL shows the same entry
    const gql = await graphql('{ me { authorizedApps { id kind client { id name company } scopes grantedAt lastUsedAt } } }', endUser.basic);
    expect(gql.errors).toBeUndefined();
    expect(gql.data.me.authorizedApps).toEqual([
      { id: entry.id, kind: 'GRANT', client: { id: String(client.id), name: 'Dashboard', company: 'Acme' }, scopes: ['read', 'write'], grantedAt: expect.any(String), lastUsedAt: expect.any(String) },
    ]);

    const grantId = BigInt(entry.id.slice('grant-'.length));
    const audits = await count("SELECT count(*) AS n FROM audit_logs WHERE source_type = 'oauth_token' AND action = 'destroy' AND actor_id = $1", [String(endUser.id)]);
    expect((await call('DELETE', `${GRANTS}/${entry.id}`, endUser.basic)).status).toBe(204);

    // at once: the access token answers 401, the refresh token invalid_grant
    expect(await me(tokens.access)).toBe(401);
    expect(await refresh(s.base, client.identifier, tokens.refresh)).toEqual({ status: 400, error: 'invalid_grant' });
    expect(await list(endUser)).toEqual([]);
    // stored: the grant revoked, every token of it revoked; audited with the end user as actor, and the event written
    expect(await count('SELECT count(*) AS n FROM oauth_grants WHERE id = $1 AND revoked_at IS NOT NULL', [String(grantId)])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM oauth_tokens WHERE grant_id = $1 AND revoked_at IS NULL', [String(grantId)])).toBe(0);
    expect(await count("SELECT count(*) AS n FROM audit_logs WHERE source_type = 'oauth_token' AND action = 'destroy' AND actor_id = $1", [String(endUser.id)])).toBe(audits + 1);
    const tokenId = (await s.ctx.db.sql<{ id: string }>('SELECT id FROM oauth_tokens WHERE grant_id = $1', [String(grantId)]))[0].id;
    expect(await count("SELECT count(*) AS n FROM events WHERE type = 'zen:event-type:oauth_token.revoked' AND subject = $1", [`zen:oauth_token:${tokenId}`])).toBe(1);
    const logged = await s.ctx.db.sql<{ change_description: string; source_label: string }>(
      "SELECT change_description, source_label FROM audit_logs WHERE source_type = 'oauth_token' AND source_id = $1 AND action = 'destroy'", [tokenId],
    );
    expect(logged).toEqual([{ change_description: `Revoked with its grant ${grantId} by its user (authorized apps)`, source_label: `${tokens.access.slice(0, 10)}...` }]);
    expect(JSON.stringify(logged)).not.toContain(tokens.access);

    // a second time: 404, as for anything that is not a live entry of the viewer
    expect((await call('DELETE', `${GRANTS}/${entry.id}.json`, endUser.basic)).status).toBe(404);
  });

  it('a rotated family is revoked whole: the grant lists once, and the newest pair dies', async () => {
    const first = await consent(endUser, 'read');
    const rotated = await fetch(`${s.base}/oauth/tokens`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: first.refresh, client_id: client.identifier }),
    }).then((r) => r.json() as Promise<{ access_token: string; refresh_token: string }>);
    expect(await me(rotated.access_token)).toBe(200);
    const entries = await list(endUser);
    expect(entries.map((e) => [e.kind, e.scopes])).toEqual([['grant', ['read']]]);
    expect(entries[0].last_used_at).not.toBeNull();
    const gql = await graphql('mutation($id: ID!) { revokeAuthorizedApp(id: $id) }', endUser.basic, { id: entries[0].id });
    expect(gql).toEqual({ data: { revokeAuthorizedApp: true } });
    expect(await me(rotated.access_token)).toBe(401);
    expect(await refresh(s.base, client.identifier, rotated.refresh_token)).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('a token created by an admin (who is now an agent) lists as kind token and its user revokes it', async () => {
    const colleague = await s.ctx.createUser(s.admin.accountId, 'admin');
    const created = await call('POST', '/api/v2/oauth/tokens', colleague.basic, { token: { client_id: client.id, scopes: ['read'] } });
    expect(created.status).toBe(201);
    // the admin makes their colleague an agent: the token stays theirs, acting with the agent role
    expect((await call('PUT', `/api/v2/users/${colleague.id}`, s.admin.basic, { user: { role: 'agent' } })).status).toBe(200);
    const token = created.body.token.token as string;
    expect(await me(token)).toBe(200);

    const entries = await list(colleague);
    expect(entries).toEqual([{
      id: `token-${created.body.token.id}`, kind: 'token', client: { id: client.id, name: 'Dashboard', company: 'Acme' }, scopes: ['read'],
      granted_at: created.body.token.created_at, last_used_at: expect.stringMatching(/Z$/),
    }]);
    // the admin's list does not show it
    expect((await list(s.admin)).map((e) => e.id)).not.toContain(entries[0].id);
    // an admin may not revoke it here either: this is each person's own list
    expect((await call('DELETE', `${GRANTS}/${entries[0].id}`, s.admin.basic)).status).toBe(404);
    expect(await me(token)).toBe(200);

    expect((await call('DELETE', `${GRANTS}/${entries[0].id}`, colleague.basic)).status).toBe(204);
    expect(await me(token)).toBe(401);
    expect(await list(colleague)).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM audit_logs WHERE source_type = 'oauth_token' AND source_id = $1 AND action = 'destroy' AND actor_id = $2", [
      String(created.body.token.id), String(colleague.id),
    ])).toBe(1);
  });

  it('a client_credentials token acts as the admin who created the client: it lists in their apps as a token, and revoking it ends it', async () => {
    const confidential = await s.register({ type: 'confidential', scopes: 'read' });
    const issued = await s.post('/oauth/tokens', { grant_type: 'client_credentials', client_id: confidential.identifier, client_secret: confidential.secret });
    expect(issued.status).toBe(200);
    const token = issued.body.access_token as string;
    const entry = (await list(s.admin)).find((e) => e.client.id === confidential.id)!;
    expect(entry).toEqual({
      id: expect.stringMatching(/^token-[1-9][0-9]*$/), kind: 'token', client: { id: confidential.id, name: 'OAuth app', company: 'Acme' }, scopes: ['read'],
      granted_at: expect.any(String), last_used_at: null,
    });
    expect((await call('DELETE', `${GRANTS}/${entry.id}`, s.admin.basic)).status).toBe(204);
    expect(await me(token)).toBe(401);
  });

  it("another user's or another account's entry is 404 and nothing is revoked; garbage ids are 404, never 500", async () => {
    const tokens = await consent(endUser);
    const [grant] = await list(endUser);
    const adminToken = await call('POST', '/api/v2/oauth/tokens', s.admin.basic, { token: { client_id: client.id, scopes: ['read'] } });
    const tokenEntry = `token-${adminToken.body.token.id}`;
    const otherAccount = await s.ctx.createAccount();
    const stranger = await s.ctx.createUser(otherAccount, 'admin');

    for (const who of [s.agent, stranger]) {
      expect((await call('DELETE', `${GRANTS}/${grant.id}`, who.basic)).status).toBe(404);
      expect((await call('DELETE', `${GRANTS}/${tokenEntry}`, who.basic)).status).toBe(404);
      const gql = await graphql('mutation($id: ID!) { revokeAuthorizedApp(id: $id) }', who.basic, { id: grant.id });
      expect(gql.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
      expect((await list(who)).map((e) => e.id)).not.toContain(grant.id);
    }
    // the end user's grant token is no token entry of theirs: revoked with its grant only
    const grantTokenId = (await s.ctx.db.sql<{ id: string }>('SELECT id FROM oauth_tokens WHERE grant_id = $1', [grant.id.slice(6)]))[0].id;
    expect((await call('DELETE', `${GRANTS}/token-${grantTokenId}`, endUser.basic)).status).toBe(404);
    // nothing was revoked
    expect(await me(tokens.access)).toBe(200);
    expect(await me(adminToken.body.token.token)).toBe(200);
    expect((await list(endUser)).map((e) => e.id)).toEqual([grant.id]);

    for (const garbage of ['grant-x', 'token-', '99999999999999999999', 'grant-99999999999999999999', 'grant-0', 'token-01', '..%2F', '%2E%2E%2F', 'grant-1%00', 'GRANT-1', 'grant--1', 'token-1e3']) {
      const res = await call('DELETE', `${GRANTS}/${garbage}`, endUser.basic);
      expect({ garbage, status: res.status }).toEqual({ garbage, status: 404 });
      expect(res.body).toEqual({ error: 'RecordNotFound', description: 'Not found' });
    }
    for (const garbage of ['grant-x', 'token-', '99999999999999999999', 'grant-99999999999999999999', '../', '']) {
      const gql = await graphql('mutation($id: ID!) { revokeAuthorizedApp(id: $id) }', endUser.basic, { id: garbage });
      expect({ garbage, codes: gql.errors?.map((e) => e.extensions?.code) }).toEqual({ garbage, codes: ['NOT_FOUND'] });
    }
    expect(await me(tokens.access)).toBe(200);
    // clean up for the next test
    expect((await call('DELETE', `${GRANTS}/${grant.id}`, endUser.basic)).status).toBe(204);
  });

  it('end users, agents and admins all list and revoke their own; a token needs read to list and write to revoke', async () => {
    for (const who of [endUser, s.agent, s.admin]) {
      const tokens = await consent(who);
      const [grant] = (await list(who)).filter((e) => e.kind === 'grant');
      expect(grant.client.name).toBe('Dashboard');
      // a read-only token lists, but may not revoke (403, nothing revoked); a write-only token revokes, but may not list
      // (of the second app: 'read', then 'write' which that grant does not cover, so two grants)
      const readOnly = await consentAndExchange(s.base, second.identifier, REDIRECT, who, 'read');
      const writeOnly = await consentAndExchange(s.base, second.identifier, REDIRECT, who, 'write');
      expect((await call('DELETE', `${GRANTS}/${grant.id}`, bearer(readOnly.access))).status).toBe(403);
      expect((await call('GET', GRANTS, bearer(writeOnly.access))).status).toBe(403);
      expect(await me(tokens.access)).toBe(200);
      expect((await call('DELETE', `${GRANTS}/${grant.id}`, bearer(writeOnly.access))).status).toBe(204);
      expect(await me(tokens.access)).toBe(401);
      // a token may revoke its own grant: it fails at once itself
      const own = (await list(bearer(readOnly.access))).find((e) => e.scopes.join(' ') === 'write')!;
      expect((await call('DELETE', `${GRANTS}/${own.id}`, bearer(writeOnly.access))).status).toBe(204);
      expect((await call('GET', GRANTS, bearer(writeOnly.access))).status).toBe(401);
    }
    // without credentials: 401
    expect((await fetch(`${s.base}${GRANTS}`)).status).toBe(401);
    expect((await fetch(`${s.base}${GRANTS}/grant-1`, { method: 'DELETE' })).status).toBe(401);
  });
});
