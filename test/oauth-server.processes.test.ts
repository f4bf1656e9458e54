import { createDb } from '../src/db/create-db';
import { withPrisma, type TestDb } from './helpers/test-db';
import { createServices, type Services } from '../src/domain/services';
import { s256 } from '../src/domain/oauth-server/pkce';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';
import { basicHeader, DEFAULT_LIMITS } from './helpers/test-app';

// Codes and refresh tokens are single use across processes (docs/api.md, "OAuth 2.0
// authorization server"): two server processes on one PostgreSQL, the same code
// or refresh token sent to both at the same moment → exactly one gets tokens.

jest.setTimeout(180_000);

const HASH_KEY = 'oauth-processes-hash-key-0123456789abcdef';
const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };
const REDIRECT = 'https://app.example.com/cb';
const VERIFIER = 'v'.repeat(43);
const ROUNDS = 8;

describeOnPostgres('OAuth codes and refresh tokens across two server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let a: ServerHandle;
  let b: ServerHandle;
  let db: TestDb;
  let services: Services;
  let identifier: string;
  let adminId: bigint;
  let accountId: bigint;

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    const env = { DATABASE_URL: database.url, ADMIN_PASSWORD: ADMIN.password, HASH_KEY };
    a = await startServer(env);
    b = await startServer(env);
    const created = await fetch(`${a.url}/api/v2/oauth/clients`, {
      method: 'POST',
      headers: { authorization: basicHeader(ADMIN.email, ADMIN.password), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'race', scopes: 'read write', redirect_uris: REDIRECT, client_type: 'public' }),
    });
    const client = (await created.json()) as { client_identifier: string; agent_id: number };
    identifier = client.client_identifier;
    adminId = BigInt(client.agent_id);
    // the authorization pages' side, in this process, on the same database and key
    db = withPrisma(await createDb({ databaseUrl: database.url, poolSize: 2 }));
    services = createServices({ db, hashKey: Buffer.from(HASH_KEY, 'utf8'), limits: DEFAULT_LIMITS });
    accountId = (await db.prisma.user.findUniqueOrThrow({ where: { id: adminId } })).accountId;
  }, 180_000);
  afterAll(async () => {
    await killAll();
    await db?.close();
    await database?.drop();
  });

  const code = async () => {
    const check = await services.oauthServer.validateAuthorizationRequest({
      response_type: 'code', client_id: identifier, redirect_uri: REDIRECT, code_challenge: s256(VERIFIER), code_challenge_method: 'S256',
    });
    if (!check.ok) throw new Error(check.error.description);
    return (await services.oauthServer.issueAuthorizationCode({ ...check.request, user: { accountId, userId: adminId } })).code;
  };
  const token = (server: ServerHandle, params: Record<string, string>) =>
    fetch(`${server.url}/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: identifier, ...params }) }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }),
    );

  it(`a code redeemed on both at once: exactly one gets tokens, the other invalid_grant (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const c = await code();
      const params = { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: VERIFIER };
      const results = await Promise.all([token(a, params), token(b, params)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(results.find((r) => r.status === 400)!.body.error).toBe('invalid_grant');
      // the replay revoked what the winner got
      const winner = results.find((r) => r.status === 200)!.body;
      const current = await fetch(`${a.url}/api/v2/oauth/tokens/current.json`, { headers: { authorization: `Bearer ${winner.access_token}` } });
      expect(current.status).toBe(401);
    }
  });

  it(`a refresh token used on both at once: exactly one rotation succeeds (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const first = await token(a, { grant_type: 'authorization_code', code: await code(), redirect_uri: REDIRECT, code_verifier: VERIFIER });
      expect(first.status).toBe(200);
      const params = { grant_type: 'refresh_token', refresh_token: first.body.refresh_token };
      const results = await Promise.all([token(a, params), token(b, params)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(results.find((r) => r.status === 400)!.body.error).toBe('invalid_grant');
      // the loser's replay revoked the family: the winner's new tokens too
      const winner = results.find((r) => r.status === 200)!.body;
      expect((await token(b, { grant_type: 'refresh_token', refresh_token: winner.refresh_token })).status).toBe(400);
    }
    const live = await db.sql<{ n: number }>(`SELECT count(*)::int AS n FROM oauth_tokens WHERE grant_id IS NOT NULL AND revoked_at IS NULL`);
    expect(live[0].n).toBe(0);
  });
});
