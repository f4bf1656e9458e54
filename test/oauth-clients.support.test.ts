import { request as httpRequest } from 'node:http';
import { createClient } from 'node-zendesk';
import { createTestApp, type TestContext, type TestUser } from './helpers/test-app';
import { auditOf } from './helpers/audit';
import { REDIRECT, RFC7636, basicClientAuth } from './helpers/oauth-server';

// Zendesk Support's aliases on the client routes (issue 25; docs/api.md, "OAuth clients"):
// its body ({"client": {name, identifier, kind, redirect_uri, description, company,
// logo_url}}) on create and update, PUT …/generate_secret, identifiers chosen by the
// caller and unique per account, and how a grant endpoint finds a client whose
// identifier several accounts hold. Everything over real HTTP on 127.0.0.1, the
// Zendesk client library (node-zendesk) used unmodified.

/** The keys of the seed's client JSON: the Support body adds none. */
const SEED_KEYS = ['agent_id', 'client_identifier', 'client_secret', 'client_type', 'company', 'create_date', 'id', 'name', 'redirect_uris', 'scopes', 'update_date'];
const CLIENT_GQL = 'query($id: ID!) { oauthClient(id: $id) { clientIdentifier clientType redirectUris scopes company description logoUrl } }';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

describe('Zendesk Support aliases on the OAuth client routes', () => {
  let ctx: TestContext;
  let port: number;
  let base: string;
  // acme is the older account (lower id), globex the newer
  let acme: { id: bigint; host: string; admin: TestUser };
  let globex: { id: bigint; host: string; admin: TestUser };

  /** One request over real HTTP; `host` names the account's host (the socket still goes to 127.0.0.1). */
  const call = (method: string, path: string, opts: { host?: string; headers?: Record<string, string>; body?: unknown; form?: Record<string, string> } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const payload = opts.form ? new URLSearchParams(opts.form).toString() : opts.body === undefined ? undefined : JSON.stringify(opts.body);
      const headers: Record<string, string> = { host: `${opts.host ?? '127.0.0.1'}:${port}`, ...opts.headers };
      if (payload !== undefined) {
        headers['content-type'] ??= opts.form ? 'application/x-www-form-urlencoded' : 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });

  const create = (admin: TestUser, body: unknown) => call('POST', '/api/v2/oauth/clients.json', { headers: { authorization: admin.basic }, body });
  const update = (admin: TestUser, id: number, body: unknown) => call('PUT', `/api/v2/oauth/clients/${id}.json`, { headers: { authorization: admin.basic }, body });
  const stored = async (admin: TestUser, id: number) => {
    const res = await ctx.graphql(CLIENT_GQL, { id: String(id) }, { authorization: admin.basic });
    return res.json().data.oauthClient as Record<string, unknown>;
  };
  /** client_credentials at the token endpoint (HTTP Basic client authentication) on `host`. */
  const clientCredentials = (identifier: string, secret: string, host?: string) =>
    call('POST', '/oauth/tokens', { host, headers: { authorization: basicClientAuth(identifier, secret) }, form: { grant_type: 'client_credentials', scope: 'read' } });
  /** The client a token was issued for, as the token shows itself (on the host it was issued on). */
  const clientOfToken = async (token: string, host?: string) => {
    const res = await call('GET', '/api/v2/oauth/tokens/current.json', { host, headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return res.json.token.client_id as number;
  };
  const supportBody = (identifier: string, extra: Record<string, unknown> = {}) => ({
    client: {
      name: 'Support app', identifier, kind: 'confidential', redirect_uri: [REDIRECT], description: 'Syncs tickets', company: 'Acme', logo_url: 'https://cdn.example.com/logo.png', ...extra,
    },
  });

  beforeAll(async () => {
    ctx = await createTestApp();
    const address = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(address).port);
    base = `http://127.0.0.1:${port}`;
    const accounts = ctx.app.services.accounts;
    const a = await accounts.create(`Acme ${process.pid}`, `acme-sup-${process.pid}`);
    const g = await accounts.create(`Globex ${process.pid}`, `globex-sup-${process.pid}`);
    expect(a.id < g.id).toBe(true);
    acme = { id: a.id, host: `${a.subdomain}.localhost`, admin: await ctx.createUser(a.id, 'admin') };
    globex = { id: g.id, host: `${g.subdomain}.localhost`, admin: await ctx.createUser(g.id, 'admin') };
  });
  afterAll(() => ctx.close());

  describe('the Support body on create and update', () => {
    it('creates with the Support names: the seed-shaped answer, description and logo_url stored (GraphQL shows them)', async () => {
      const res = await create(acme.admin, supportBody('acme.sync_app-1'));
      expect(res.status).toBe(201);
      expect(Object.keys(res.json).sort()).toEqual(SEED_KEYS);
      expect(res.json).toMatchObject({
        name: 'Support app', company: 'Acme', client_identifier: 'acme.sync_app-1', client_type: 'confidential', redirect_uris: REDIRECT,
        scopes: 'read write', agent_id: Number(acme.admin.id), update_date: null,
      });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.location).toMatch(new RegExp(`/api/v2/oauth/clients/${res.json.id}\\.json$`));
      expect(await stored(acme.admin, res.json.id)).toEqual({
        clientIdentifier: 'acme.sync_app-1', clientType: 'CONFIDENTIAL', redirectUris: [REDIRECT], scopes: 'read write', company: 'Acme',
        description: 'Syncs tickets', logoUrl: 'https://cdn.example.com/logo.png',
      });
      // the REST show keeps the seed's shape too
      const shown = await call('GET', `/api/v2/oauth/clients/${res.json.id}.json`, { headers: { authorization: acme.admin.basic } });
      expect(Object.keys(shown.json).sort()).toEqual(SEED_KEYS);
      // the audit record names what the create set
      const [audit] = await auditOf(ctx, 'oauth_client', res.json.id);
      expect(audit.changed_fields).toEqual(['name', 'company', 'client_type', 'scopes', 'redirect_uris', 'client_secret', 'client_identifier', 'description', 'logo_url']);
    });

    it('updates with the Support names (partial), the identifier given again unchanged; another identifier is refused and nothing changes', async () => {
      const c = (await create(acme.admin, supportBody('acme.update-me'))).json;
      const res = await update(acme.admin, c.id, { client: { identifier: 'acme.update-me', kind: 'public', redirect_uri: 'https://b.example.com/cb', description: '  Reads tickets ', logo_url: '' } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json).sort()).toEqual(SEED_KEYS);
      expect(res.json).toMatchObject({ client_identifier: 'acme.update-me', client_type: 'public', redirect_uris: 'https://b.example.com/cb', name: 'Support app', client_secret: `${c.client_secret.slice(0, 10)}...` });
      expect(await stored(acme.admin, c.id)).toMatchObject({ clientType: 'PUBLIC', redirectUris: ['https://b.example.com/cb'], description: 'Reads tickets', logoUrl: null });
      const audits = await auditOf(ctx, 'oauth_client', c.id);
      expect(audits.at(-1)!.changed_fields).toEqual(['client_type', 'redirect_uris', 'description', 'logo_url']);

      const before = await stored(acme.admin, c.id);
      const changed = await update(acme.admin, c.id, { client: { identifier: 'acme.other', name: 'Renamed' } });
      expect(changed.status).toBe(422);
      expect(changed.json.details.client_identifier[0].description).toBe('Client identifier: cannot be changed after the client is created');
      expect(await stored(acme.admin, c.id)).toEqual(before);
      expect((await call('GET', `/api/v2/oauth/clients/${c.id}.json`, { headers: { authorization: acme.admin.basic } })).json.name).toBe('Support app');
      expect(await auditOf(ctx, 'oauth_client', c.id)).toHaveLength(audits.length);
    });

    it('GraphQL takes the same fields (clientIdentifier, description, logoUrl)', async () => {
      const res = await ctx.graphql(
        'mutation($i: OAuthClientInput!) { createOAuthClient(input: $i) { id clientIdentifier description logoUrl } }',
        { i: { name: 'GQL', scopes: 'read', redirectUris: [REDIRECT], clientIdentifier: 'gql-chosen', description: 'From GraphQL', logoUrl: 'http://localhost:8080/l.png' } },
        { authorization: acme.admin.basic },
      );
      expect(res.json().data.createOAuthClient).toMatchObject({ clientIdentifier: 'gql-chosen', description: 'From GraphQL', logoUrl: 'http://localhost:8080/l.png' });
    });

    it('mixes both vocabularies; the same field in both spellings is refused, naming both', async () => {
      const mixed = await create(acme.admin, { client: { name: 'Mixed', identifier: 'acme.mixed', client_type: 'confidential', scopes: 'read', redirect_uri: REDIRECT } });
      expect(mixed.status).toBe(201);
      expect(mixed.json).toMatchObject({ client_identifier: 'acme.mixed', client_type: 'confidential', scopes: 'read', redirect_uris: REDIRECT });

      const count = async () => (await ctx.db.sql<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients'))[0].n;
      const n = await count();
      const cases: [Record<string, unknown>, string, string][] = [
        [{ redirect_uri: [REDIRECT], redirect_uris: [REDIRECT] }, 'redirect_uri', 'redirect_uris'],
        [{ kind: 'public', client_type: 'public' }, 'kind', 'client_type'],
        [{ identifier: 'acme.twice', client_identifier: 'acme.twice' }, 'identifier', 'client_identifier'],
      ];
      for (const [fields, theirs, ours] of cases) {
        const body = { client: { name: 'Twice', scopes: 'read', ...(fields.redirect_uri ? {} : { redirect_uris: REDIRECT }), ...fields } };
        const res = await create(acme.admin, body);
        expect({ status: res.status, error: res.json.error }).toEqual({ status: 422, error: 'RecordInvalid' });
        expect(res.json.details[theirs][0].description).toBe(`${theirs} and ${ours} are the same field: give one of them, not both`);
        const upd = await update(acme.admin, mixed.json.id, body);
        expect(upd.status).toBe(422);
        expect(upd.json.details[theirs][0].description).toContain(ours);
      }
      expect(await count()).toBe(n);
      // client_identifier alone stays read-only and ignored, as before: one is generated
      const ignored = await create(acme.admin, { name: 'Ignored', scopes: 'read', redirect_uris: REDIRECT, client_identifier: 'acme.ignored' });
      expect(ignored.status).toBe(201);
      expect(ignored.json.client_identifier).toMatch(/^[A-Za-z0-9_-]{40}$/);
      expect((await create(acme.admin, { name: 'Ignored', scopes: 'read', redirect_uris: REDIRECT, client_identifier: 5 })).status).toBe(201);
    });

    it('a null redirect_uris or redirect_uri is refused on update, never read as "absent"; a null type or identifier is "unchanged" in both spellings', async () => {
      const made = await create(acme.admin, supportBody('acme.nulls'));
      expect(made.status).toBe(201);
      const before = await stored(acme.admin, made.json.id);
      // redirect URIs are required: null is refused, named as the stored field (as any refused Support value is)
      for (const field of ['redirect_uris', 'redirect_uri']) {
        for (const body of [{ [field]: null }, { client: { [field]: null } }]) {
          const res = await update(acme.admin, made.json.id, body);
          expect({ field, status: res.status, error: res.json.error }).toEqual({ field, status: 422, error: 'RecordInvalid' });
          expect(Object.keys(res.json.details)).toEqual(['redirect_uris']);
        }
      }
      expect(await stored(acme.admin, made.json.id)).toEqual(before);
      // a null type or identifier counts as not given, in both spellings alike (docs/api.md, "OAuth clients")
      for (const field of ['client_type', 'kind', 'identifier']) {
        const res = await update(acme.admin, made.json.id, { client: { [field]: null } });
        expect({ field, status: res.status }).toEqual({ field, status: 200 });
      }
      expect(await stored(acme.admin, made.json.id)).toEqual(before);
    });

    it('a body in our vocabulary still needs scopes; a Support body without scopes gets "read write"', async () => {
      const ours = await create(acme.admin, { name: 'No scopes', redirect_uris: REDIRECT });
      expect(ours.status).toBe(422);
      expect(ours.json.details.scopes[0].error).toBe('BlankValue');
      const theirs = await create(acme.admin, { client: { name: 'No scopes', redirect_uri: [REDIRECT] } });
      expect(theirs.status).toBe(201);
      expect(theirs.json).toMatchObject({ scopes: 'read write', client_type: 'public' });
    });

    it('checks description and logo_url', async () => {
      const bad: [Record<string, unknown>, string, string][] = [
        [{ description: 'd'.repeat(1025) }, 'description', 'Description: is too long (maximum is 1024 characters)'],
        [{ description: 5 }, 'description', 'Description: must be a string'],
        [{ logo_url: 'http://example.com/logo.png' }, 'logo_url', 'Logo url: http://example.com/logo.png may use http only for localhost, 127.0.0.1 or [::1]'],
        [{ logo_url: 'javascript:alert(1)' }, 'logo_url', 'Logo url: javascript:alert(1) must be an absolute https:// URL'],
        [{ logo_url: 'logo.png' }, 'logo_url', 'Logo url: logo.png must be an absolute https:// URL'],
        [{ logo_url: 'https://user@cdn.example.com/l.png' }, 'logo_url', 'Logo url: https://user@cdn.example.com/l.png must not contain user information'],
        [{ logo_url: `https://cdn.example.com/${'x'.repeat(2030)}` }, 'logo_url', 'Logo url: is too long (maximum is 2048 characters)'],
      ];
      for (const [fields, key, description] of bad) {
        const res = await create(acme.admin, { client: { name: 'Checks', redirect_uri: REDIRECT, ...fields } });
        expect({ status: res.status, description: res.json.details?.[key]?.[0]?.description }).toEqual({ status: 422, description });
      }
      // the body's schema names the field as sent; the other checks name ours
      for (const [fields, key] of [[{ kind: 'private' }, 'kind'], [{ redirect_uri: 5 }, 'redirect_uri'], [{ redirect_uri: ['http://example.com/cb'] }, 'redirect_uris']] as const) {
        const res = await create(acme.admin, { client: { name: 'Checks', redirect_uri: REDIRECT, ...fields } });
        expect({ status: res.status, keys: Object.keys(res.json.details) }).toEqual({ status: 422, keys: [key] });
      }
      const ok = await create(acme.admin, { client: { name: 'Checks', redirect_uri: REDIRECT, description: 'd'.repeat(1024), logo_url: 'http://127.0.0.1:3000/l.png' } });
      expect(ok.status).toBe(201);
      expect(await stored(acme.admin, ok.json.id)).toMatchObject({ description: 'd'.repeat(1024), logoUrl: 'http://127.0.0.1:3000/l.png' });
    });
  });

  describe('identifiers', () => {
    it('are 1..100 letters, digits, "_", "." or "-"', async () => {
      for (const bad of ['', 'a b', 'x'.repeat(101), 'café', 'a/b', 'a:b', 'a%20b', 'a\u0000b', ' padded ']) {
        const res = await create(acme.admin, supportBody(bad));
        expect({ bad, status: res.status, description: res.json.details?.client_identifier?.[0]?.description }).toEqual({
          bad, status: 422, description: 'Client identifier: must be 1 to 100 characters, each a letter, digit, "_", "." or "-"',
        });
      }
      const type = await create(acme.admin, supportBody(7 as unknown as string));
      expect({ status: type.status, details: Object.keys(type.json.details) }).toEqual({ status: 422, details: ['identifier'] });
      for (const good of ['x', 'I'.repeat(100), 'A.b-c_9']) {
        const res = await create(acme.admin, supportBody(good));
        expect({ good, status: res.status, identifier: res.json.client_identifier }).toEqual({ good, status: 201, identifier: good });
      }
    });

    it('are unique in the account (422, nothing stored), case-sensitive, and free in another account (no cross-account leak)', async () => {
      expect((await create(acme.admin, supportBody('taken-id'))).status).toBe(201);
      const again = await create(acme.admin, supportBody('taken-id', { name: 'Second' }));
      expect(again.status).toBe(422);
      expect(again.json).toEqual({
        error: 'RecordInvalid', description: 'Record validation errors',
        details: { client_identifier: [{ error: 'InvalidValue', description: 'Client identifier: has already been taken' }] },
      });
      expect(await ctx.db.sql('SELECT 1 FROM oauth_clients WHERE name = $1', ['Second'])).toEqual([]);
      expect((await create(acme.admin, supportBody('TAKEN-ID'))).status).toBe(201);
      // another account: accepted exactly as a fresh identifier
      const other = await create(globex.admin, supportBody('taken-id'));
      expect(other.status).toBe(201);
      expect(other.json.client_identifier).toBe('taken-id');
    });
  });

  describe('an identifier held by two accounts', () => {
    let older: { id: number; secret: string };
    let newer: { id: number; secret: string };
    const ID = 'shared.integration';

    beforeAll(async () => {
      // the older account registers it first, the newer one later
      const a = (await create(acme.admin, supportBody(ID, { name: 'Acme Sync' }))).json;
      const g = (await create(globex.admin, supportBody(ID, { name: 'Globex Sync' }))).json;
      older = { id: a.id, secret: a.client_secret };
      newer = { id: g.id, secret: g.client_secret };
    });

    it('the token endpoint: on the plain host the older account’s client, on each subdomain that account’s', async () => {
      const plain = await clientCredentials(ID, older.secret);
      expect(plain.status).toBe(200);
      expect(await clientOfToken(plain.json.access_token)).toBe(older.id);
      // the newer account's client never authenticates on the plain host, nor with the other's secret
      const stolen = await clientCredentials(ID, newer.secret);
      expect({ status: stolen.status, error: stolen.json.error }).toEqual({ status: 401, error: 'invalid_client' });

      const own = await clientCredentials(ID, newer.secret, globex.host);
      expect(own.status).toBe(200);
      expect(await clientOfToken(own.json.access_token, globex.host)).toBe(newer.id);
      const crossed = await clientCredentials(ID, older.secret, globex.host);
      expect({ status: crossed.status, error: crossed.json.error }).toEqual({ status: 401, error: 'invalid_client' });

      const acmeOwn = await clientCredentials(ID, older.secret, acme.host);
      expect(acmeOwn.status).toBe(200);
      expect(await clientOfToken(acmeOwn.json.access_token, acme.host)).toBe(older.id);
      expect((await clientCredentials(ID, newer.secret, acme.host)).status).toBe(401);
    });

    it('the authorization page: on the plain host the older account’s client, on each subdomain that account’s', async () => {
      const query = new URLSearchParams({ response_type: 'code', client_id: ID, redirect_uri: REDIRECT, state: 's', code_challenge: RFC7636.challenge, code_challenge_method: 'S256' });
      const page = (host?: string) => call('GET', `/oauth/authorizations/new?${query}`, { host });
      const plain = await page();
      expect(plain.status).toBe(200);
      expect(plain.text).toContain('Acme Sync');
      expect(plain.text).not.toContain('Globex Sync');
      const onGlobex = await page(globex.host);
      expect(onGlobex.status).toBe(200);
      expect(onGlobex.text).toContain('Globex Sync');
      expect(onGlobex.text).not.toContain('Acme Sync');
      const onAcme = await page(acme.host);
      expect(onAcme.text).toContain('Acme Sync');
    });

    it('an account that takes an identifier later never takes over, even an older account', async () => {
      // the newer account holds it first: the older account's later client stays behind it on the plain host
      const first = (await create(globex.admin, supportBody('first.come', { name: 'Globex First' }))).json;
      const later = (await create(acme.admin, supportBody('first.come', { name: 'Acme Later' }))).json;
      const plain = await clientCredentials('first.come', first.client_secret);
      expect(plain.status).toBe(200);
      expect(await clientOfToken(plain.json.access_token)).toBe(first.id);
      expect((await clientCredentials('first.come', later.client_secret)).status).toBe(401);
      // on its own host the later client works
      const own = await clientCredentials('first.come', later.client_secret, acme.host);
      expect(await clientOfToken(own.json.access_token, acme.host)).toBe(later.id);
    });
  });

  describe('PUT /api/v2/oauth/clients/{id}/generate_secret', () => {
    it('regenerates as the seed’s POST forms do: no body, an empty JSON body, or grace_period; same answer and audit record', async () => {
      const c = (await create(acme.admin, supportBody('acme.rotate'))).json;
      const res = await call('PUT', `/api/v2/oauth/clients/${c.id}/generate_secret`, { headers: { authorization: acme.admin.basic } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['client_secret']);
      expect(res.headers['cache-control']).toBe('no-store');
      expect((await clientCredentials('acme.rotate', c.client_secret)).status).toBe(401);
      expect((await clientCredentials('acme.rotate', res.json.client_secret)).status).toBe(200);
      const [audit] = (await auditOf(ctx, 'oauth_client', c.id)).slice(-1);
      expect(audit).toMatchObject({ action: 'update', changed_fields: ['client_secret'], change_description: expect.stringContaining('the previous one stopped working') });

      // a JSON content type with an empty body, as some clients send it; then a grace period
      const empty = await call('PUT', `/api/v2/oauth/clients/${c.id}/generate_secret.json`, { headers: { authorization: acme.admin.basic, 'content-type': 'application/json', 'content-length': '0' } });
      expect(empty.status).toBe(200);
      const grace = await call('PUT', `/api/v2/oauth/clients/${c.id}/generate_secret.json`, { headers: { authorization: acme.admin.basic }, body: { client: { grace_period: 60 } } });
      expect(grace.status).toBe(200);
      expect((await clientCredentials('acme.rotate', empty.json.client_secret)).status).toBe(200);
      expect((await clientCredentials('acme.rotate', grace.json.client_secret)).status).toBe(200);
      expect((await auditOf(ctx, 'oauth_client', c.id)).at(-1)!.change_description).toContain('stays valid for 60 seconds');
      const badGrace = await call('PUT', `/api/v2/oauth/clients/${c.id}/generate_secret`, { headers: { authorization: acme.admin.basic }, body: { grace_period: 604801 } });
      expect(badGrace.status).toBe(422);
    });

    it('admins only, and only their account’s clients', async () => {
      const c = (await create(acme.admin, supportBody('acme.guarded'))).json;
      const agent = await ctx.createUser(acme.id, 'agent');
      const path = `/api/v2/oauth/clients/${c.id}/generate_secret.json`;
      expect((await call('PUT', path)).status).toBe(401);
      expect((await call('PUT', path, { headers: { authorization: agent.basic } })).status).toBe(403);
      expect((await call('PUT', path, { headers: { authorization: globex.admin.basic } })).status).toBe(404);
      expect((await call('PUT', '/api/v2/oauth/clients/99999999/generate_secret', { headers: { authorization: acme.admin.basic } })).status).toBe(404);
      expect((await clientCredentials('acme.guarded', c.client_secret)).status).toBe(200);
    });
  });

  it('node-zendesk, unmodified: create and update with the Support body, generateSecret, then the new secret works and the old one not', async () => {
    const zd = createClient({ username: acme.admin.email, password: acme.admin.password, endpointUri: `${base}/api/v2` });
    const created = (await zd.oauthclients.create({
      name: 'Zendesk lib app', identifier: 'node-zendesk.app', kind: 'confidential', redirect_uri: [REDIRECT], description: 'Made by node-zendesk', company: 'Acme', logo_url: 'https://cdn.example.com/z.png',
    })) as unknown as { result: Record<string, any> };
    const client = created.result;
    expect(Object.keys(client).sort()).toEqual(SEED_KEYS);
    expect(client).toMatchObject({ client_identifier: 'node-zendesk.app', client_type: 'confidential', redirect_uris: REDIRECT, scopes: 'read write' });

    const updated = (await zd.oauthclients.update(client.id, { name: 'Renamed by node-zendesk', description: 'Updated', redirect_uri: ['https://c.example.com/cb'] })) as unknown as { result: Record<string, any> };
    expect(updated.result).toMatchObject({ id: client.id, name: 'Renamed by node-zendesk', redirect_uris: 'https://c.example.com/cb' });
    expect(await stored(acme.admin, client.id)).toMatchObject({ description: 'Updated', logoUrl: 'https://cdn.example.com/z.png' });

    expect((await clientCredentials('node-zendesk.app', client.client_secret)).status).toBe(200);
    const generated = (await zd.oauthclients.generateSecret(client.id)) as unknown as { result: { client_secret: string } };
    const fresh = generated.result.client_secret;
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await clientCredentials('node-zendesk.app', client.client_secret)).status).toBe(401);
    const token = await clientCredentials('node-zendesk.app', fresh);
    expect(token.status).toBe(200);
    expect(await clientOfToken(token.json.access_token)).toBe(client.id);
  });
});
