// Seed data of a benchmark run, written straight into a migrated, empty database:
//   - account "bench": an admin (owner of every token), a client, N tokens
//     (scopes read write), and Basic-auth admins for scenario 8;
//   - K "callback" accounts, each with an agent, a client, the agent's token and
//     a voice phone number, so that scenario 7 spreads its load under the
//     per-account rate limit (30 per 10 minutes).
// Tokens are derived from their number (tokenText), so the harness can present
// any of them without storing a million strings; the database holds only their
// HMAC (computed by pgcrypto when the extension is available, in Node otherwise).
import pg from 'pg';
import { createHmac } from 'node:crypto';
import { hashPassword } from '../src/domain/auth/passwords';
import type { LoadSpec } from './load';

export const tokenText = (i: number) => `benchtoken${String(i).padStart(12, '0')}`;
export const callbackTokenText = (i: number) => `benchcallbk${String(i).padStart(12, '0')}`;
/** refresh token i of the OAuth scenarios: each is used once (its own grant, so a replay revokes only it) */
export const refreshTokenText = (i: number) => `benchrefresh${String(i).padStart(12, '0')}`;
/** the bench client is confidential, with this secret (client authentication at /oauth/*) */
export const BENCH_CLIENT = { identifier: 'bench-client', secret: 'bench-client-secret' };
export const BASIC_PASSWORD = 'bench-basic-password';
export const REQUESTER_PHONE = '+14155552671';

export interface SeedOptions {
  url: string;
  hashKey: string;
  tokens: number;
  callbackAccounts: number;
  basicUsers: number;
  /** single-use refresh tokens for the refresh scenario */
  refreshTokens?: number;
  log?: (line: string) => void;
}

export interface Fixture {
  accountId: string;
  adminId: string;
  clientId: string;
  /** ids of the bench account's tokens: token i (1-based) has id firstTokenId + i - 1 */
  firstTokenId: string;
  tokens: number;
  callback: { token: string; phoneNumberId: string }[];
  basic: { email: string; password: string }[];
  refreshTokens: number;
  /** how the token hashes were computed */
  hashedBy: 'pgcrypto' | 'node';
  seconds: number;
}

/** A load without where it goes and how hard (origin, connections, pipelining, duration). */
export type Load = Omit<LoadSpec, 'origin' | 'connections' | 'pipelining' | 'durationSeconds'>;

/** `count` numbers from 1 to `total`, evenly spread (tokens, ids). */
export const spread = (count: number, total: number) => Array.from({ length: Math.min(count, total) }, (_, i) => 1 + Math.floor((i * total) / Math.min(count, total)));

/** Scenario 1 of bench/run.ts: the Bearer read, each request with one of a hundred tokens, as many clients would present. */
export const bearerLoad = (tokens: number): Load & { variants: { headers: Record<string, string> }[] } => ({
  method: 'GET',
  path: '/api/v2/oauth/tokens/current.json',
  variants: spread(100, tokens).map((i) => ({ headers: { authorization: `Bearer ${tokenText(i)}` } })),
});

/** Scenario 6 of bench/run.ts: the admin (token 1) creates a token of the bench client. */
export const tokenCreationLoad = (f: Pick<Fixture, 'clientId'>): Load => ({
  method: 'POST',
  path: '/api/v2/oauth/tokens.json',
  headers: { authorization: `Bearer ${tokenText(1)}` },
  body: JSON.stringify({ token: { client_id: Number(f.clientId), scopes: ['read'] } }),
});

/** A client's Basic header at the OAuth endpoints (RFC 6749 §2.3.1). */
const clientBasic = (client: { identifier: string; secret: string }) => ({
  'content-type': 'application/x-www-form-urlencoded',
  authorization: `Basic ${Buffer.from(`${client.identifier}:${client.secret}`).toString('base64')}`,
});

/** Scenario 10 of bench/run.ts: a client_credentials grant (scope read), the client authenticating with Basic. */
export const clientCredentialsLoad = (client: { identifier: string; secret: string }): Load => ({
  method: 'POST', path: '/oauth/tokens', headers: clientBasic(client), body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read' }).toString(),
});

/** Scenario 9 of bench/run.ts: the introspection of each of `tokens` in turn, the client authenticating with Basic. */
export const introspectionLoad = (client: { identifier: string; secret: string }, tokens: string[]): Load => ({
  method: 'POST', path: '/oauth/introspect', headers: clientBasic(client), variants: tokens.map((token) => ({ body: new URLSearchParams({ token }).toString() })),
});

/** A token's hash as the service stores it: HMAC-SHA-256 under HASH_KEY, hex. */
export const hmac = (key: string, value: string) => createHmac('sha256', Buffer.from(key, 'utf8')).update(value, 'utf8').digest('hex');
const CHUNK = 100_000;

export async function seed(options: SeedOptions): Promise<Fixture> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const client = new pg.Client({ connectionString: options.url });
  await client.connect();
  try {
    const one = async <T = any>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows[0] as T;
    const passwordHash = await hashPassword(BASIC_PASSWORD);
    const { id: accountId } = await one(`INSERT INTO accounts (name) VALUES ('bench') RETURNING id`);
    const { id: adminId } = await one(
      `INSERT INTO users (account_id, name, email, email_key, role, password_hash) VALUES ($1, 'Bench Admin', 'admin@bench.example.com', 'admin@bench.example.com', 'admin', $2) RETURNING id`,
      [accountId, passwordHash],
    );
    const basic: Fixture['basic'] = [];
    for (let i = 1; i <= options.basicUsers; i++) {
      const email = `basic${i}@bench.example.com`;
      await client.query(`INSERT INTO users (account_id, name, email, email_key, role, password_hash) VALUES ($1, $2, $3, $3, 'admin', $4)`, [accountId, `Basic ${i}`, email, passwordHash]);
      basic.push({ email, password: BASIC_PASSWORD });
    }
    const { id: clientId } = await one(
      `INSERT INTO oauth_clients (account_id, name, company, identifier, client_type, scopes, redirect_uris, agent_id)
       VALUES ($1, 'Bench client', 'Bench', $2, 'confidential', 'read write', ARRAY['https://bench.example.com/cb'], $3) RETURNING id`,
      [accountId, BENCH_CLIENT.identifier, adminId],
    );
    await client.query(`INSERT INTO oauth_client_secrets (account_id, client_id, secret_hash, secret_prefix) VALUES ($1, $2, $3, 'benchclien')`, [
      accountId, clientId, hmac(options.hashKey, BENCH_CLIENT.secret),
    ]);

    // The N tokens, in chunks (progress, bounded transactions).
    let hashedBy: Fixture['hashedBy'] = 'pgcrypto';
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');
    } catch {
      hashedBy = 'node';
    }
    let firstTokenId: string | undefined;
    for (let from = 1; from <= options.tokens; from += CHUNK) {
      const to = Math.min(options.tokens, from + CHUNK - 1);
      let row: { first: string };
      if (hashedBy === 'pgcrypto') {
        row = await one(
          `WITH ins AS (
             INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
             SELECT $1, $2, $3, encode(hmac(t, $4, 'sha256'), 'hex'), left(t, 10), ARRAY['read', 'write']
               FROM (SELECT 'benchtoken' || lpad(g::text, 12, '0') AS t FROM generate_series($5::int, $6::int) g ORDER BY g) s
             RETURNING id)
           SELECT min(id)::text AS first FROM ins`,
          [accountId, clientId, adminId, options.hashKey, from, to],
        );
      } else {
        const hashes: string[] = [];
        for (let i = from; i <= to; i++) hashes.push(hmac(options.hashKey, tokenText(i)));
        row = await one(
          `WITH ins AS (
             INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
             SELECT $1, $2, $3, h, 'benchtoken', ARRAY['read', 'write'] FROM unnest($4::text[]) WITH ORDINALITY AS u(h, n) ORDER BY n
             RETURNING id)
           SELECT min(id)::text AS first FROM ins`,
          [accountId, clientId, adminId, hashes],
        );
      }
      firstTokenId ??= row.first;
      if (options.tokens > CHUNK) log(`  seeded ${to.toLocaleString('en')} / ${options.tokens.toLocaleString('en')} tokens`);
    }
    // The harness computes token ids from their number: check that they are contiguous.
    const span = await one<{ lo: string; hi: string; n: string }>(`SELECT min(id)::text AS lo, max(id)::text AS hi, count(*)::text AS n FROM oauth_tokens WHERE account_id = $1`, [accountId]);
    if (BigInt(span.hi) - BigInt(span.lo) + 1n !== BigInt(span.n) || span.lo !== firstTokenId) throw new Error('seeded token ids are not contiguous');
    // Spot check: the service will find token 1 by its hash.
    const check = await one(`SELECT id FROM oauth_tokens WHERE token_hash = $1`, [hmac(options.hashKey, tokenText(1))]);
    if (!check) throw new Error('seeded token hashes do not match HASH_KEY');

    // Callback accounts, set-based.
    const k = options.callbackAccounts;
    await client.query(`INSERT INTO accounts (name) SELECT 'cb-' || lpad(g::text, 6, '0') FROM generate_series(1, $1::int) g`, [k]);
    await client.query(
      `INSERT INTO users (account_id, name, email, email_key, role, password_hash)
       SELECT id, 'Agent ' || name, 'agent@' || name || '.example.com', 'agent@' || name || '.example.com', 'agent', 'x' FROM accounts WHERE name LIKE 'cb-%'`,
    );
    await client.query(
      `INSERT INTO oauth_clients (account_id, name, identifier, scopes, redirect_uris)
       SELECT id, 'Client ' || name, 'client-' || name, 'read write', ARRAY['https://bench.example.com/cb'] FROM accounts WHERE name LIKE 'cb-%'`,
    );
    await client.query(
      `INSERT INTO voice_phone_numbers (account_id, number, callback_enabled) SELECT id, '+14155550100', true FROM accounts WHERE name LIKE 'cb-%'`,
    );
    const accounts = (
      await client.query<{ n: number; account_id: string; user_id: string; client_id: string; phone_id: string }>(
        `SELECT substr(a.name, 4)::int AS n, a.id::text AS account_id, u.id::text AS user_id, c.id::text AS client_id, p.id::text AS phone_id
           FROM accounts a JOIN users u ON u.account_id = a.id JOIN oauth_clients c ON c.account_id = a.id JOIN voice_phone_numbers p ON p.account_id = a.id
          WHERE a.name LIKE 'cb-%' ORDER BY a.id`,
      )
    ).rows;
    await client.query(
      `INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes)
       SELECT a, c, u, h, 'benchcallb', ARRAY['read', 'write'] FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS x(a, c, u, h)`,
      [accounts.map((a) => a.account_id), accounts.map((a) => a.client_id), accounts.map((a) => a.user_id), accounts.map((a) => hmac(options.hashKey, callbackTokenText(a.n)))],
    );
    // Refresh tokens of the bench client, one grant each (a replay would revoke its grant only).
    const refreshTokens = options.refreshTokens ?? 0;
    if (refreshTokens > 0) {
      const hashes: string[] = [];
      for (let i = 1; i <= refreshTokens; i++) hashes.push(hmac(options.hashKey, refreshTokenText(i)));
      await client.query(
        `WITH g AS (
           INSERT INTO oauth_grants (account_id, client_id, user_id, scopes)
           SELECT $1, $2, $3, ARRAY['read', 'write'] FROM generate_series(1, $4::int)
           RETURNING id
         ), numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM g)
         INSERT INTO oauth_tokens (account_id, client_id, user_id, token_hash, token_prefix, scopes, grant_type, grant_id, expires_at,
                                   refresh_token_hash, refresh_token_prefix, refresh_token_expires_at)
         SELECT $1, $2, $3, 'bench-access-' || numbered.n, 'benchacces', ARRAY['read', 'write'], 'authorization_code', numbered.id, now() + interval '1 hour',
                h.hash, 'benchrefre', now() + interval '30 days'
           FROM numbered JOIN unnest($5::text[]) WITH ORDINALITY AS h(hash, n) ON h.n = numbered.n`,
        [accountId, clientId, adminId, refreshTokens, hashes],
      );
      log(`  seeded ${refreshTokens.toLocaleString('en')} single-use refresh tokens`);
    }
    await client.query('ANALYZE');
    return {
      accountId: String(accountId),
      adminId: String(adminId),
      clientId: String(clientId),
      firstTokenId: firstTokenId ?? '0',
      tokens: options.tokens,
      callback: accounts.map((a) => ({ token: callbackTokenText(a.n), phoneNumberId: a.phone_id })),
      basic,
      refreshTokens,
      hashedBy,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await client.end();
  }
}
