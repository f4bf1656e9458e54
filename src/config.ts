import { DEFAULT_JOB_CONCURRENCY } from './jobs/engine';
import { RETENTION_DEFAULTS, type RetentionSettings } from './domain/retention/retention-settings';
import { connectionProblem } from './db/create-db';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import path from 'node:path';

export interface Limits {
  /** failed Basic logins per email before 429 */
  loginFailures: number;
  /**
   * failed Basic logins per client address before 429 (same window). loadConfig
   * always sets it (LOGIN_THROTTLE_ADDRESS_FAILURES, default 50); absent, as in an
   * app built by hand for tests, there is no per-address limit.
   */
  loginAddressFailures?: number;
  loginWindowSeconds: number;
  /** successful callback request creations per account per window */
  callbackRequests: number;
  callbackWindowSeconds: number;
  /** live grants (consents) per user: pending codes and usable consent tokens (OAUTH_USER_LIVE_GRANTS) */
  oauthUserLiveGrants: number;
  /** live client_credentials tokens per client (OAUTH_CLIENT_LIVE_TOKENS) */
  oauthClientLiveTokens: number;
}

/** Defaults of the OAuth limits: far above any honest use, and above what the benchmark mints. */
export const OAUTH_LIMIT_DEFAULTS = { oauthUserLiveGrants: 100, oauthClientLiveTokens: 100_000 } as const;

export interface Config {
  env: 'production' | 'development' | 'test';
  host: string;
  port: number;
  databaseUrl?: string;
  /** the primary itself (DIRECT_URL): migrations, their lock, LISTEN; required when DATABASE_URL is a pooler (?pgbouncer=true) */
  directUrl?: string;
  /** READ_REPLICA_URL: streaming replicas for the audit log and the voice dashboards (docs/scaling.md) */
  readReplicaUrls: string[];
  /** REPLICA_MAX_LAG_MS: a replica further behind is left out */
  replicaMaxLagMs: number;
  dataDir: string;
  publicUrl?: string;
  /**
   * The reverse proxies whose X-Forwarded-For is believed (addresses and CIDR
   * ranges, as Fastify's trustProxy takes them): the client address of the login
   * limits, the KDF queue and the audit log is then the one they forward. Unset:
   * the peer's address, whatever the headers say.
   */
  trustProxy?: string[];
  logLevel: string;
  webConcurrency: number;
  dbPoolSize: number;
  adminEmail: string;
  adminPassword?: string;
  /** key of the HMAC that hashes tokens and client secrets at rest */
  hashKey: Buffer;
  /** what the start logs as warnings (a configuration that works but is unsafe) */
  warnings: string[];
  graphqlIntrospection: boolean;
  /**
   * Whether a webhook may point at a private, loopback or link-local address, over
   * plain http (WEBHOOK_ALLOW_PRIVATE_ENDPOINTS; default: false in production, true
   * otherwise). src/domain/webhooks/endpoint-guard.ts.
   */
  webhookAllowPrivateEndpoints: boolean;
  /** whether this process runs the background engine (WORKER; `--no-worker` turns it off for a web-only process) */
  worker?: boolean;
  /** jobs one process's engine runs at once (JOB_CONCURRENCY): deliveries mostly wait on receivers, so many */
  jobConcurrency?: number;
  /**
   * What runs GraphQL operations (GraphQL and REST alike): `compiled` (graphql-jit,
   * the default) or `interpreter` (graphql-js's execute), a switch to fall back on
   * if the compiled executor ever answers differently, and the baseline of its benchmark.
   */
  graphqlExecutor: GraphQLExecutorKind;
  limits: Limits;
  /** the retention purge: how long what is over is kept, and its pace (docs/api.md, "Retention") */
  retention: RetentionSettings;
  /** counts SQL statements per request (benchmarks only) */
  benchMode: boolean;
  /**
   * Tests only (NODE_ENV=test, OPENAPI_CONFORMANCE=fail): every answer is checked
   * against the OpenAPI document; one it does not describe becomes a 500
   * OpenApiViolation (src/http/plugins/openapi-conformance.ts).
   */
  openapiConformance?: 'record' | 'fail';
  /**
   * The bearer secret of GET /metrics (METRICS_TOKEN). Unset: /metrics is off in
   * production (404) and open to loopback clients only elsewhere (docs/api.md, "Metrics").
   */
  metricsToken?: string;
  /**
   * The browser origins (scheme://host[:port]) whose pages may call the APIs
   * (CORS_ORIGINS); empty: no CORS headers at all (docs/api.md, "CORS").
   */
  corsOrigins: string[];
}

export type GraphQLExecutorKind = 'compiled' | 'interpreter';

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A non-negative number of days, decimals allowed (0.5 = 12 hours: short periods for tests and soaks). */
function days(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigError(name, `must be a number of days between 0 and ${max} (decimals allowed), got "${raw}"`);
  const n = Number(raw);
  if (n > max) throw new ConfigError(name, `must be between 0 and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

/** The HMAC key, and a warning for the log when it is one anyone can know. */
function resolveHashKey(env: Env, mode: Config['env'], dataDir: string, embedded: boolean): { key: Buffer; warning?: string } {
  const raw = env.HASH_KEY;
  if (raw !== undefined && raw !== '') {
    if (raw.length < 32) throw new ConfigError('HASH_KEY', 'must be at least 32 characters (e.g. `openssl rand -hex 32`)');
    return { key: Buffer.from(raw, 'utf8') };
  }
  if (mode === 'production') {
    throw new ConfigError('HASH_KEY', 'is required when NODE_ENV=production (tokens and secrets are hashed with it; generate one with `openssl rand -hex 32`)');
  }
  if (embedded) {
    // A throwaway database needs no key that outlives the process.
    if (dataDir === ':memory:') return { key: randomBytes(32) };
    // The embedded database gets its own key, kept beside it, created once.
    const file = path.join(dataDir, 'hash.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    }
    return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8') };
  }
  // On PostgreSQL every process must agree on the key, and one that is written in this
  // file signs sign-in sessions and CSRF tokens that anyone could then forge: only an
  // explicit development or test environment may use it, and it is warned about.
  if (env.NODE_ENV !== 'development' && env.NODE_ENV !== 'test') {
    throw new ConfigError(
      'HASH_KEY',
      'is required with DATABASE_URL (tokens, client secrets and sign-in sessions are signed with it; generate one with `openssl rand -hex 32`), unless NODE_ENV is development or test',
    );
  }
  return {
    key: Buffer.from('development-only-hash-key-do-not-use-in-production', 'utf8'),
    warning: `HASH_KEY is not set: using the fixed development key (NODE_ENV=${env.NODE_ENV}), which anyone can read in the source; set HASH_KEY (\`openssl rand -hex 32\`) for any database that matters`,
  };
}

const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** DIRECT_URL and READ_REPLICA_URL, checked against DATABASE_URL (docs/scaling.md). */
function connectionUrls(env: Env, databaseUrl: string | undefined): { directUrl?: string; readReplicaUrls: string[] } {
  const directUrl = env.DIRECT_URL?.trim() || undefined;
  const readReplicaUrls = (env.READ_REPLICA_URL ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const [name, set] of [['DIRECT_URL', directUrl !== undefined], ['READ_REPLICA_URL', readReplicaUrls.length > 0]] as const) {
    if (set && !databaseUrl) throw new ConfigError(name, 'is set, but DATABASE_URL is not: the embedded database has no primary to reach directly and no replicas');
  }
  if (directUrl !== undefined && !POSTGRES_URL.test(directUrl)) throw new ConfigError('DIRECT_URL', 'must start with postgresql://');
  const problem = databaseUrl === undefined ? undefined : connectionProblem(databaseUrl, directUrl);
  // (the rule's message begins with the variable's name, which ConfigError puts first itself)
  if (problem) throw new ConfigError('DIRECT_URL', problem.replace(/^DIRECT_URL /, ''));
  const bad = readReplicaUrls.find((u) => !POSTGRES_URL.test(u));
  if (bad !== undefined) throw new ConfigError('READ_REPLICA_URL', 'must be one or more postgresql:// URLs, separated by commas');
  return { directUrl, readReplicaUrls };
}

/**
 * What createDb needs of the configuration: where the database is, directly and through replicas.
 * Only a process that serves the API reads from replicas (`Db.read`); the others (the worker, the
 * CLI, migrations, the cluster's primary) pass `{ replicas: false }` and start no replica monitor.
 */
export function databaseConnection(config: Config, { replicas = true }: { replicas?: boolean } = {}) {
  return {
    databaseUrl: config.databaseUrl,
    directUrl: config.directUrl,
    replicaUrls: replicas ? config.readReplicaUrls : [],
    replicaMaxLagMs: config.replicaMaxLagMs,
    dataDir: config.dataDir,
  };
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV === 'production' ? 'production' : env.NODE_ENV === 'test' ? 'test' : 'development';
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !POSTGRES_URL.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must start with postgresql:// (or be unset for the embedded database)');
  }
  const { directUrl, readReplicaUrls } = connectionUrls(env, databaseUrl);
  const publicUrl = env.PUBLIC_URL?.trim() || undefined;
  if (publicUrl) {
    let u: URL | undefined;
    try {
      u = new URL(publicUrl);
    } catch {
      u = undefined;
    }
    if (!u || !/^https?:$/.test(u.protocol) || u.username || u.password || u.search || u.hash) {
      throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL (no user, query or fragment), got "${publicUrl}"`);
    }
  }
  const dataDir = env.DATA_DIR?.trim() || './.data';
  const webConcurrency = int(env, 'WEB_CONCURRENCY', 1, 1, 64);
  if (webConcurrency > 1 && !databaseUrl) {
    throw new ConfigError(
      'WEB_CONCURRENCY',
      `is ${webConcurrency}, but the embedded database serves one process only: set DATABASE_URL to a PostgreSQL server to run several workers`,
    );
  }
  const adminEmail = env.ADMIN_EMAIL?.trim() || 'admin@example.com';
  if (!/^[^\s@]+@[^\s@]+$/.test(adminEmail)) throw new ConfigError('ADMIN_EMAIL', `is not an email address: "${adminEmail}"`);
  const adminPassword = env.ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined && adminPassword.length < 8) throw new ConfigError('ADMIN_PASSWORD', 'must be at least 8 characters');
  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}"`);
  }
  const { key: hashKey, warning: hashKeyWarning } = resolveHashKey(env, nodeEnv, dataDir, !databaseUrl);
  if (nodeEnv === 'production' && !publicUrl) {
    // Behind a proxy the Host header is whatever the client sent: links, Location
    // headers and the account's subdomain must come from the configured address.
    throw new ConfigError(
      'PUBLIC_URL',
      'is required when NODE_ENV=production: the public base URL of the service, e.g. https://help.example.com (links and account subdomains are built from it, never from the Host header)',
    );
  }
  const webhookAllowPrivateEndpoints = bool(env, 'WEBHOOK_ALLOW_PRIVATE_ENDPOINTS', nodeEnv !== 'production');
  const warnings = hashKeyWarning === undefined ? [] : [hashKeyWarning];
  if (nodeEnv === 'production' && webhookAllowPrivateEndpoints) {
    warnings.push('WEBHOOK_ALLOW_PRIVATE_ENDPOINTS=true in production: webhooks may call plain http and private, loopback and link-local addresses (the metadata service included)');
  }
  return {
    env: nodeEnv,
    host: env.HOST?.trim() || '127.0.0.1',
    port: int(env, 'PORT', 3000, 0, 65535),
    databaseUrl,
    directUrl,
    readReplicaUrls,
    replicaMaxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 1000, 1, 3_600_000),
    dataDir,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    trustProxy: trustedProxies(env),
    logLevel,
    webConcurrency,
    dbPoolSize: int(env, 'DB_POOL_SIZE', 10, 1, 200),
    adminEmail,
    adminPassword,
    hashKey,
    warnings,
    // Apollo's convention: introspection, the Sandbox landing page and "Did you
    // mean …?" suggestions are off in production unless asked for.
    graphqlIntrospection: bool(env, 'GRAPHQL_INTROSPECTION', nodeEnv !== 'production'),
    webhookAllowPrivateEndpoints,
    worker: bool(env, 'WORKER', true),
    jobConcurrency: int(env, 'JOB_CONCURRENCY', DEFAULT_JOB_CONCURRENCY, 1, 1000),
    graphqlExecutor: executorKind(env),
    limits: {
      loginFailures: 10,
      loginAddressFailures: int(env, 'LOGIN_THROTTLE_ADDRESS_FAILURES', 50, 1, 1_000_000),
      loginWindowSeconds: int(env, 'LOGIN_THROTTLE_WINDOW_SECONDS', 300, 1, 86400),
      callbackRequests: 30,
      callbackWindowSeconds: int(env, 'CALLBACK_RATE_WINDOW_SECONDS', 600, 1, 86400),
      oauthUserLiveGrants: int(env, 'OAUTH_USER_LIVE_GRANTS', OAUTH_LIMIT_DEFAULTS.oauthUserLiveGrants, 1, 100_000),
      oauthClientLiveTokens: int(env, 'OAUTH_CLIENT_LIVE_TOKENS', OAUTH_LIMIT_DEFAULTS.oauthClientLiveTokens, 1, 100_000_000),
    },
    retention: retentionSettings(env),
    benchMode: bool(env, 'BENCH_MODE', false),
    openapiConformance: nodeEnv === 'test' ? conformance(env) : undefined,
    metricsToken: metricsToken(env),
    corsOrigins: corsOrigins(env),
  };
}

/** METRICS_TOKEN: a secret anyone scraping /metrics must send; as long as a password worth the name. */
function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters without spaces (e.g. `openssl rand -hex 32`)');
  }
  return raw;
}

/** CORS_ORIGINS: comma-separated exact origins, each scheme://host[:port] as browsers send it in Origin. */
function corsOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS?.trim();
  if (raw === undefined || raw === '') return [];
  const origins = raw.split(',').map((entry) => {
    const origin = entry.trim();
    let u: URL | undefined;
    try {
      u = new URL(origin);
    } catch {
      u = undefined;
    }
    // (a wildcard parses as a host name: refused by the host's characters)
    const host = u && /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/.test(u.hostname);
    if (!u || !host || !/^https?:$/.test(u.protocol) || u.origin !== origin.toLowerCase()) {
      const hint = u && /^https?:$/.test(u.protocol) ? ` (did you mean ${u.origin}?)` : '';
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be a comma-separated list of origins, each http(s)://host[:port] with no path, no trailing slash and no wildcard (e.g. https://dashboard.example.com,http://localhost:5173), got "${origin}"${hint}`,
      );
    }
    return u.origin;
  });
  return [...new Set(origins)];
}

const TEN_YEARS_SECONDS = 315_360_000;

/** The retention purge's settings: periods (0 = at once; days: 0 = forever), interval, batch size and pause. */
function retentionSettings(env: Env): RetentionSettings {
  const d = RETENTION_DEFAULTS;
  const seconds = (name: string, fallback: number) => int(env, name, fallback, 0, TEN_YEARS_SECONDS);
  return {
    codeSeconds: seconds('CODE_RETENTION_SECONDS', d.codeSeconds),
    grantSeconds: seconds('GRANT_RETENTION_SECONDS', d.grantSeconds),
    tokenSeconds: seconds('TOKEN_RETENTION_SECONDS', d.tokenSeconds),
    secretSeconds: seconds('SECRET_RETENTION_SECONDS', d.secretSeconds),
    webhookSeconds: seconds('WEBHOOK_RETENTION_SECONDS', d.webhookSeconds),
    jobSeconds: seconds('JOB_RETENTION_SECONDS', d.jobSeconds),
    auditDays: days(env, 'AUDIT_RETENTION_DAYS', d.auditDays, 36_500),
    callbackDays: days(env, 'CALLBACK_RETENTION_DAYS', d.callbackDays, 36_500),
    intervalSeconds: int(env, 'RETENTION_INTERVAL_SECONDS', d.intervalSeconds, 1, 604_800),
    batchSize: int(env, 'RETENTION_BATCH_SIZE', d.batchSize, 1, 100_000),
    pauseMs: int(env, 'RETENTION_PAUSE_MS', d.pauseMs, 0, 60_000),
  };
}

// proxy-addr's names for the loopback, link-local and unique-local (private) ranges
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY: a comma-separated list of IP addresses and CIDR ranges (or proxy-addr's range names). */
function trustedProxies(env: Env): string[] | undefined {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === '') return undefined;
  const entries = raw.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!PROXY_RANGE_NAMES.includes(entry) && (family === 0 || !prefixOk || extra !== undefined)) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be a comma-separated list of the reverse proxies' IP addresses or CIDR ranges (e.g. 10.0.0.5,192.168.0.0/16), got "${entry}" in "${raw}"`,
      );
    }
  }
  return entries;
}

function executorKind(env: Env): GraphQLExecutorKind {
  const raw = env.GRAPHQL_EXECUTOR?.trim();
  if (raw === undefined || raw === '') return 'compiled';
  if (raw === 'compiled' || raw === 'interpreter') return raw;
  throw new ConfigError('GRAPHQL_EXECUTOR', `must be compiled or interpreter, got "${raw}"`);
}

function conformance(env: Env): Config['openapiConformance'] {
  const raw = env.OPENAPI_CONFORMANCE?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'record' || raw === 'fail') return raw;
  throw new ConfigError('OPENAPI_CONFORMANCE', `must be record or fail, got "${raw}"`);
}
