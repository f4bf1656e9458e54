import { Writable } from 'node:stream';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app';
import { createServices } from '../../src/domain/services';
import { OAUTH_LIMIT_DEFAULTS, type GraphQLExecutorKind, type Limits } from '../../src/config';
import { hashPassword } from '../../src/domain/auth/passwords';
import { hmacHex, randomUrlSafe } from '../../src/domain/crypto';
import type { Role } from '../../src/domain/auth/viewer';
import { createTestDb, type TestDb } from './test-db';
import type { SubscriptionLimits } from '../../src/domain/events/subscription-limits';
import type { RetentionSource } from '../../src/http/app-metrics';

export const TEST_HASH_KEY = Buffer.from('test-hash-key-0123456789abcdef0123456789', 'utf8');
export const DEFAULT_LIMITS: Limits = { loginFailures: 10, loginWindowSeconds: 300, callbackRequests: 30, callbackWindowSeconds: 600, ...OAUTH_LIMIT_DEFAULTS };

export interface TestUser {
  id: bigint;
  accountId: bigint;
  email: string;
  password: string;
  role: Role;
  /** Authorization header value for Basic auth */
  basic: string;
}

export interface TestContext {
  app: App;
  db: TestDb;
  /** every log line the app wrote, for "no secret in the logs" checks */
  logs: string[];
  inject: (opts: InjectOptions) => Promise<LightMyRequestResponse>;
  graphql: (query: string, variables?: Record<string, unknown>, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
  createAccount: (name?: string, omnichannelRouting?: boolean) => Promise<bigint>;
  createUser: (accountId: bigint, role: Role, opts?: { email?: string; password?: string; active?: boolean }) => Promise<TestUser>;
  close: () => Promise<void>;
}

/** What Fastify logs when a handler sends a second answer to one request (FST_ERR_REP_ALREADY_SENT). */
export const DOUBLE_REPLY = /Reply was already sent|FST_ERR_REP_ALREADY_SENT/;

/**
 * Every app of the suite fails its file on close when it answered a request
 * twice: the second send is only a log line, which no test would otherwise see.
 */
function assertNoDoubleReply(logs: string[]): void {
  const found = logs.filter((line) => DOUBLE_REPLY.test(line));
  if (found.length > 0) throw new Error(`The app answered a request twice (${found.length}×); first log line: ${found[0].slice(0, 2000)}`);
}

let counter = 0;
// Hashing at full scrypt cost is slow; tests reuse one hash per password.
const hashCache = new Map<string, Promise<string>>();

export function basicHeader(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
}

export async function createTestApp(
  options: {
    limits?: Partial<Limits>; publicUrl?: string; graphqlIntrospection?: boolean; graphqlExecutor?: GraphQLExecutorKind; trustProxy?: string[]; subscriptionLimits?: Partial<SubscriptionLimits>;
    /** WEBHOOK_ALLOW_PRIVATE_ENDPOINTS: true by default, as outside production */
    webhookAllowPrivateEndpoints?: boolean;
    /** PGlite runs: the database in this folder, not in memory (for a server process or the CLI after close(), with HASH_KEY=TEST_HASH_KEY) */
    dataDir?: string;
    /** NODE_ENV as the app sees it (only /metrics's access depends on it); METRICS_TOKEN; CORS_ORIGINS */
    env?: 'production' | 'development' | 'test';
    metricsToken?: string;
    corsOrigins?: string[];
    /** what /metrics shows of the purge */
    retention?: RetentionSource;
  } = {},
): Promise<TestContext> {
  const db = await createTestDb({ dataDir: options.dataDir });
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const app = await buildApp({
    db,
    services: createServices({ db, hashKey: TEST_HASH_KEY, limits: { ...DEFAULT_LIMITS, ...options.limits }, webhookAllowPrivateEndpoints: options.webhookAllowPrivateEndpoints ?? true }),
    config: {
      hashKey: TEST_HASH_KEY,
      publicUrl: options.publicUrl,
      graphqlIntrospection: options.graphqlIntrospection ?? true,
      graphqlExecutor: options.graphqlExecutor,
      trustProxy: options.trustProxy,
      logLevel: 'info',
      // every answer is checked against the OpenAPI document; test/helpers/openapi-conformance.ts fails the file on a violation
      openapiConformance: 'record',
      env: options.env,
      metricsToken: options.metricsToken,
      corsOrigins: options.corsOrigins,
    },
    logger: { level: 'info', stream },
    subscriptionLimits: options.subscriptionLimits,
    retention: options.retention,
  });
  await app.fastify.ready();
  const inject = (opts: InjectOptions) => app.fastify.inject(opts);
  return {
    app,
    db,
    logs,
    inject,
    graphql: (query, variables, headers = {}) =>
      inject({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: { query, variables } }),
    async createAccount(name, omnichannelRouting = false) {
      const account = await db.prisma.account.create({ data: { name: name ?? `account-${process.pid}-${++counter}`, omnichannelRouting } });
      return account.id;
    },
    async createUser(accountId, role, opts = {}) {
      const email = opts.email ?? `${role}-${++counter}@example.com`;
      const password = opts.password ?? `pw-${role}-secret`;
      if (!hashCache.has(password)) hashCache.set(password, hashPassword(password));
      const user = await db.prisma.user.create({
        data: { accountId, email, emailKey: email.toLowerCase(), name: email.split('@')[0], role, passwordHash: await hashCache.get(password)!, active: opts.active ?? true },
      });
      return { id: user.id, accountId, email, password, role, basic: basicHeader(email, password) };
    },
    async close() {
      await app.fastify.close();
      await db.close();
      assertNoDoubleReply(logs);
    },
  };
}

/**
 * Issues a token straight into the database, hashed exactly as the service
 * stores tokens (for auth tests that predate the token API).
 */
export async function insertToken(
  ctx: Pick<TestContext, 'db'>,
  user: Pick<TestUser, 'id' | 'accountId'>,
  opts: { scopes?: string[]; clientScopes?: string; expiresAt?: Date; revokedAt?: Date } = {},
): Promise<{ token: string; id: bigint; clientId: bigint }> {
  const client = await ctx.db.prisma.oAuthClient.create({
    data: {
      accountId: user.accountId,
      name: 'test client',
      identifier: randomUrlSafe(30),
      secrets: { create: { accountId: user.accountId, secretHash: hmacHex(TEST_HASH_KEY, randomUrlSafe()), secretPrefix: 'xxxxxxxxxx' } },
      scopes: opts.clientScopes ?? 'read write',
      redirectUris: ['https://example.com/cb'],
      agentId: user.id,
    },
  });
  const token = randomUrlSafe(32);
  const row = await ctx.db.prisma.oAuthToken.create({
    data: {
      accountId: user.accountId,
      clientId: client.id,
      userId: user.id,
      tokenHash: hmacHex(TEST_HASH_KEY, token),
      tokenPrefix: token.slice(0, 10),
      scopes: opts.scopes ?? ['read', 'write'],
      expiresAt: opts.expiresAt,
      revokedAt: opts.revokedAt,
    },
  });
  return { token, id: row.id, clientId: client.id };
}
