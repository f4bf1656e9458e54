import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError, databaseConnection } from '../src/config';
import { runToExit, SERVER_JS, tempDir } from './helpers/processes';

// Configuration comes from environment variables only and is validated at start
// with a message naming the bad variable (docs/api.md, "Operations").

describe('configuration (docs/api.md, "Operations")', () => {
  const data = tempDir('config-test-');
  // DATA_DIR always points at a temp folder: the embedded database's key file
  // must never be written into the repository.
  const env = (vars: Record<string, string>) => ({ DATA_DIR: data.path, ...vars });
  afterAll(() => data.remove());

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }],
    ['WEB_CONCURRENCY', { WEB_CONCURRENCY: '2' }],
    ['HASH_KEY', { NODE_ENV: 'production' }],
    ['HASH_KEY', { HASH_KEY: 'too-short' }],
    ['GRAPHQL_INTROSPECTION', { GRAPHQL_INTROSPECTION: 'maybe' }],
    ['GRAPHQL_EXECUTOR', { GRAPHQL_EXECUTOR: 'jit' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'not a url' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'https://help.example.com/?x=1' }],
    ['PUBLIC_URL', { NODE_ENV: 'production', HASH_KEY: 'k'.repeat(32) }],
    ['LOGIN_THROTTLE_ADDRESS_FAILURES', { LOGIN_THROTTLE_ADDRESS_FAILURES: '0' }],
    ['OAUTH_USER_LIVE_GRANTS', { OAUTH_USER_LIVE_GRANTS: '0' }],
    ['OAUTH_CLIENT_LIVE_TOKENS', { OAUTH_CLIENT_LIVE_TOKENS: 'many' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['ADMIN_PASSWORD', { ADMIN_PASSWORD: 'short' }],
    ['JOB_CONCURRENCY', { JOB_CONCURRENCY: '0' }],
    ['JOB_CONCURRENCY', { JOB_CONCURRENCY: 'lots' }],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'short' }],
    ['METRICS_TOKEN', { METRICS_TOKEN: 'has a space in it somewhere' }],
    ['CORS_ORIGINS', { CORS_ORIGINS: '*' }],
  ])('names %s when it is bad (%j)', (variable, vars) => {
    let error: unknown;
    try {
      loadConfig(env(vars));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(variable);
  });

  // the retention purge (docs/api.md, "Retention"): periods are non-negative integers (days may have decimals), the interval and batch size positive
  it.each([
    ...['CODE_RETENTION_SECONDS', 'GRANT_RETENTION_SECONDS', 'TOKEN_RETENTION_SECONDS', 'SECRET_RETENTION_SECONDS', 'WEBHOOK_RETENTION_SECONDS', 'JOB_RETENTION_SECONDS',
      'RETENTION_PAUSE_MS'].flatMap((name) => [[name, '-1'], [name, '1.5'], [name, 'a week'], [name, '99999999999']]),
    ...['AUDIT_RETENTION_DAYS', 'CALLBACK_RETENTION_DAYS'].flatMap((name) => [[name, '-1'], [name, '1.'], [name, '.5'], [name, 'a week'], [name, '99999999999']]),
    ['RETENTION_INTERVAL_SECONDS', '0'], ['RETENTION_INTERVAL_SECONDS', 'hourly'], ['RETENTION_BATCH_SIZE', '0'], ['RETENTION_BATCH_SIZE', '1000000'],
  ])('names %s when it is %j', (variable, value) => {
    expect(() => loadConfig(env({ [variable]: value }))).toThrow(new RegExp(`^Invalid configuration: ${variable} must be`));
  });

  it('keeps what is over as issue 24 says unless the retention settings say otherwise', () => {
    expect(loadConfig(env({})).retention).toEqual({
      codeSeconds: 3600, grantSeconds: 86_400, tokenSeconds: 604_800, secretSeconds: 86_400, webhookSeconds: 604_800, jobSeconds: 604_800,
      auditDays: 400, callbackDays: 90, intervalSeconds: 600, batchSize: 1000, pauseMs: 20,
    });
    const set = loadConfig(
      env({
        CODE_RETENTION_SECONDS: '60', GRANT_RETENTION_SECONDS: '0', TOKEN_RETENTION_SECONDS: '120', SECRET_RETENTION_SECONDS: '5', WEBHOOK_RETENTION_SECONDS: '3600',
        JOB_RETENTION_SECONDS: '7', AUDIT_RETENTION_DAYS: '0', CALLBACK_RETENTION_DAYS: '30', RETENTION_INTERVAL_SECONDS: '30', RETENTION_BATCH_SIZE: '500', RETENTION_PAUSE_MS: '0',
      }),
    );
    expect(set.retention).toEqual({
      codeSeconds: 60, grantSeconds: 0, tokenSeconds: 120, secretSeconds: 5, webhookSeconds: 3600, jobSeconds: 7, auditDays: 0, callbackDays: 30,
      intervalSeconds: 30, batchSize: 500, pauseMs: 0,
    });
    // days take decimals: half a day, or seconds for a soak
    expect(loadConfig(env({ AUDIT_RETENTION_DAYS: '0.5', CALLBACK_RETENTION_DAYS: '0.0001' })).retention).toMatchObject({ auditDays: 0.5, callbackDays: 0.0001 });
  });

  it('runs 50 background jobs at once per process unless JOB_CONCURRENCY says otherwise', () => {
    expect(loadConfig(env({})).jobConcurrency).toBe(50);
    expect(loadConfig(env({ JOB_CONCURRENCY: '8' })).jobConcurrency).toBe(8);
  });

  it('runs several workers only on PostgreSQL', () => {
    expect(loadConfig(env({ WEB_CONCURRENCY: '2', DATABASE_URL: 'postgresql://u@127.0.0.1:5432/db', HASH_KEY: 'k'.repeat(32) })).webConcurrency).toBe(2);
  });

  it('accepts production with a long enough HASH_KEY and a PUBLIC_URL', () => {
    const key = 'k'.repeat(32);
    const config = loadConfig(env({ NODE_ENV: 'production', HASH_KEY: key, PUBLIC_URL: 'https://help.example.com' }));
    expect(config.env).toBe('production');
    expect(config.hashKey.toString('utf8')).toBe(key);
    expect(config.publicUrl).toBe('https://help.example.com');
  });

  it('requires PUBLIC_URL in production, saying why', () => {
    // links and account subdomains must not come from a Host header a client chose
    expect(() => loadConfig(env({ NODE_ENV: 'production', HASH_KEY: 'k'.repeat(32) }))).toThrow(
      new ConfigError(
        'PUBLIC_URL',
        'is required when NODE_ENV=production: the public base URL of the service, e.g. https://help.example.com (links and account subdomains are built from it, never from the Host header)',
      ),
    );
    expect(() => loadConfig(env({ NODE_ENV: 'production', HASH_KEY: 'k'.repeat(32), PUBLIC_URL: '  ' }))).toThrow(/PUBLIC_URL is required when NODE_ENV=production/);
  });

  it('turns GraphQL introspection (and the landing page and suggestions) off in production unless GRAPHQL_INTROSPECTION=true', () => {
    const production = { NODE_ENV: 'production', HASH_KEY: 'k'.repeat(32), PUBLIC_URL: 'https://help.example.com' };
    expect(loadConfig(env(production)).graphqlIntrospection).toBe(false);
    expect(loadConfig(env({ ...production, GRAPHQL_INTROSPECTION: 'true' })).graphqlIntrospection).toBe(true);
    expect(loadConfig(env({ ...production, GRAPHQL_INTROSPECTION: 'false' })).graphqlIntrospection).toBe(false);
    expect(loadConfig(env({ NODE_ENV: 'development' })).graphqlIntrospection).toBe(true);
    expect(loadConfig(env({ NODE_ENV: 'test' })).graphqlIntrospection).toBe(true);
    expect(loadConfig(env({ NODE_ENV: 'test', GRAPHQL_INTROSPECTION: 'false' })).graphqlIntrospection).toBe(false);
  });

  it('runs GraphQL on the compiled executor unless GRAPHQL_EXECUTOR=interpreter', () => {
    expect(loadConfig(env({})).graphqlExecutor).toBe('compiled');
    expect(loadConfig(env({ GRAPHQL_EXECUTOR: 'interpreter' })).graphqlExecutor).toBe('interpreter');
    expect(loadConfig(env({ GRAPHQL_EXECUTOR: 'compiled' })).graphqlExecutor).toBe('compiled');
  });

  it('has good defaults', () => {
    // A HASH_KEY keeps loadConfig from creating ./.data/hash.key in the repository.
    const config = loadConfig({ HASH_KEY: 'h'.repeat(32) });
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: './.data',
      databaseUrl: undefined,
      webConcurrency: 1,
      adminEmail: 'admin@example.com',
      adminPassword: undefined,
      graphqlIntrospection: true,
      logLevel: 'info',
      limits: { loginFailures: 10, loginAddressFailures: 50, loginWindowSeconds: 300, callbackRequests: 30, callbackWindowSeconds: 600 },
    });
  });

  it('reads the values it is given', () => {
    const config = loadConfig(
      env({
        PORT: '8080', HOST: '0.0.0.0', GRAPHQL_INTROSPECTION: 'false', PUBLIC_URL: 'https://help.example.com/', DATABASE_URL: 'postgres://u@h/db', HASH_KEY: 'k'.repeat(32),
        LOGIN_THROTTLE_ADDRESS_FAILURES: '200', OAUTH_USER_LIVE_GRANTS: '20', OAUTH_CLIENT_LIVE_TOKENS: '5000',
      }),
    );
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dataDir: data.path,
      graphqlIntrospection: false,
      publicUrl: 'https://help.example.com',
      databaseUrl: 'postgres://u@h/db',
      limits: expect.objectContaining({ loginAddressFailures: 200, oauthUserLiveGrants: 20, oauthClientLiveTokens: 5000 }),
    });
  });

  it('gives the embedded database a key of its own, kept in DATA_DIR and stable across restarts', () => {
    const first = loadConfig(env({}));
    const file = path.join(data.path, 'hash.key');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8').trim().length).toBeGreaterThanOrEqual(32);
    expect(loadConfig(env({})).hashKey.equals(first.hashKey)).toBe(true);
  });

  it('reads TRUST_PROXY as a list of proxy addresses and CIDR ranges, and names it when an entry is neither', () => {
    expect(loadConfig(env({})).trustProxy).toBeUndefined();
    expect(loadConfig(env({ TRUST_PROXY: ' 10.0.0.5, 192.168.0.0/16,fd00::/8,::1, loopback ' })).trustProxy).toEqual([
      '10.0.0.5', '192.168.0.0/16', 'fd00::/8', '::1', 'loopback',
    ]);
    for (const bad of ['true', '*', '1', '10.0.0.0/33', '10.0.0.300', 'proxy.internal', '10.0.0.1,', '::1/129', '10.0.0.0/8/1']) {
      expect(() => loadConfig(env({ TRUST_PROXY: bad }))).toThrow(/^Invalid configuration: TRUST_PROXY must be a comma-separated list of the reverse proxies' IP addresses or CIDR ranges/);
    }
  });

  it('reads METRICS_TOKEN, unset by default (docs/api.md, "Metrics")', () => {
    expect(loadConfig(env({})).metricsToken).toBeUndefined();
    expect(loadConfig(env({ METRICS_TOKEN: '  ' })).metricsToken).toBeUndefined();
    expect(loadConfig(env({ METRICS_TOKEN: ' 0123456789abcdef0123 ' })).metricsToken).toBe('0123456789abcdef0123');
    // the message names the variable and what to do, never the value given
    expect(() => loadConfig(env({ METRICS_TOKEN: 'secret-ish' }))).toThrow(
      new ConfigError('METRICS_TOKEN', 'must be at least 16 characters without spaces (e.g. `openssl rand -hex 32`)'),
    );
  });

  it('reads CORS_ORIGINS as exact origins, none by default, and names a bad entry (docs/api.md, "CORS")', () => {
    expect(loadConfig(env({})).corsOrigins).toEqual([]);
    expect(loadConfig(env({ CORS_ORIGINS: ' https://dash.example.com , http://localhost:5173,https://Ops.Example.com:8443,https://dash.example.com' })).corsOrigins).toEqual([
      'https://dash.example.com', 'http://localhost:5173', 'https://ops.example.com:8443',
    ]);
    const bad = ['*', 'dash.example.com', 'https://dash.example.com/', 'https://dash.example.com/app', 'https://*.example.com', 'ftp://files.example.com',
      'https://dash.example.com,', 'https://u:p@dash.example.com', 'https://dash.example.com?x=1', 'null', 'https://dash.example.com:443'];
    for (const entry of bad) {
      expect(() => loadConfig(env({ CORS_ORIGINS: entry }))).toThrow(/^Invalid configuration: CORS_ORIGINS must be a comma-separated list of origins, each http\(s\):\/\/host\[:port\]/);
    }
    // a near miss says what was meant
    expect(() => loadConfig(env({ CORS_ORIGINS: 'https://dash.example.com/' }))).toThrow(/got "https:\/\/dash.example.com\/" \(did you mean https:\/\/dash.example.com\?\)$/);
  });

  // Behind a transaction pooler and beside read replicas (docs/scaling.md): DIRECT_URL, READ_REPLICA_URL, REPLICA_MAX_LAG_MS
  describe('DIRECT_URL, READ_REPLICA_URL and REPLICA_MAX_LAG_MS', () => {
    const PRIMARY = 'postgresql://app:primary-password@db.internal:5432/helpdesk';
    const POOLER = 'postgresql://app:pooler-password@pooler.internal:6432/helpdesk?pgbouncer=true';
    const pg = (vars: Record<string, string>) => env({ HASH_KEY: 'k'.repeat(32), ...vars });

    it('has none by default, and a lag of 1000 ms', () => {
      expect(loadConfig(pg({ DATABASE_URL: PRIMARY }))).toMatchObject({ databaseUrl: PRIMARY, directUrl: undefined, readReplicaUrls: [], replicaMaxLagMs: 1000 });
      expect(loadConfig(env({}))).toMatchObject({ databaseUrl: undefined, directUrl: undefined, readReplicaUrls: [], replicaMaxLagMs: 1000 });
      // blank is unset
      expect(loadConfig(pg({ DATABASE_URL: PRIMARY, DIRECT_URL: ' ', READ_REPLICA_URL: ' , ', REPLICA_MAX_LAG_MS: '' }))).toMatchObject({ directUrl: undefined, readReplicaUrls: [], replicaMaxLagMs: 1000 });
    });

    it('reads them, and hands them to createDb (databaseConnection)', () => {
      const config = loadConfig(
        pg({
          DATABASE_URL: POOLER, DIRECT_URL: ` ${PRIMARY} `, REPLICA_MAX_LAG_MS: '250',
          READ_REPLICA_URL: ' postgresql://app:r@replica-1.internal/helpdesk,postgres://app:r@replica-2.internal/helpdesk?pgbouncer=true ,',
        }),
      );
      expect(config).toMatchObject({
        databaseUrl: POOLER, directUrl: PRIMARY, replicaMaxLagMs: 250,
        readReplicaUrls: ['postgresql://app:r@replica-1.internal/helpdesk', 'postgres://app:r@replica-2.internal/helpdesk?pgbouncer=true'],
      });
      expect(databaseConnection(config)).toEqual({
        databaseUrl: POOLER, directUrl: PRIMARY, replicaUrls: config.readReplicaUrls, replicaMaxLagMs: 250, dataDir: data.path,
      });
      // the worker, the CLI, migrations and the cluster's primary never read from a replica: they get none
      expect(databaseConnection(config, { replicas: false })).toEqual({
        databaseUrl: POOLER, directUrl: PRIMARY, replicaUrls: [], replicaMaxLagMs: 250, dataDir: data.path,
      });
      // a direct DATABASE_URL needs no DIRECT_URL; ?pgbouncer=false is no pooler
      expect(loadConfig(pg({ DATABASE_URL: `${PRIMARY}?pgbouncer=false&sslmode=disable` })).directUrl).toBeUndefined();
      expect(loadConfig(pg({ DATABASE_URL: PRIMARY, DIRECT_URL: `${PRIMARY}?pgbouncer=false` })).directUrl).toBe(`${PRIMARY}?pgbouncer=false`);
      expect(loadConfig(pg({ DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '1' })).replicaMaxLagMs).toBe(1);
      expect(loadConfig(pg({ DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '3600000' })).replicaMaxLagMs).toBe(3_600_000);
    });

    it.each<[string, string, Record<string, string>, RegExp]>([
      ['DIRECT_URL', 'set without DATABASE_URL', { DIRECT_URL: PRIMARY }, /^Invalid configuration: DIRECT_URL is set, but DATABASE_URL is not/],
      ['READ_REPLICA_URL', 'set without DATABASE_URL', { READ_REPLICA_URL: PRIMARY }, /^Invalid configuration: READ_REPLICA_URL is set, but DATABASE_URL is not/],
      ['DIRECT_URL', 'missing behind a pooler', { DATABASE_URL: POOLER }, /^Invalid configuration: DIRECT_URL is required when DATABASE_URL is a transaction pooler \(\?pgbouncer=true\)/],
      ['DIRECT_URL', 'not postgresql://', { DATABASE_URL: POOLER, DIRECT_URL: 'mysql://app@db.internal/helpdesk' }, /^Invalid configuration: DIRECT_URL must start with postgresql:\/\//],
      ['DIRECT_URL', 'itself the pooler', { DATABASE_URL: POOLER, DIRECT_URL: POOLER }, /^Invalid configuration: DIRECT_URL must reach the primary itself, not a pooler/],
      ['DIRECT_URL', 'itself flagged as a pooler', { DATABASE_URL: PRIMARY, DIRECT_URL: `${PRIMARY}?sslmode=require&pgbouncer=true` }, /^Invalid configuration: DIRECT_URL must reach the primary itself, not a pooler/],
      ['READ_REPLICA_URL', 'not a URL', { DATABASE_URL: PRIMARY, READ_REPLICA_URL: 'replica-1.internal:5432' }, /^Invalid configuration: READ_REPLICA_URL must be one or more postgresql:\/\/ URLs/],
      ['READ_REPLICA_URL', 'one entry not postgresql://', { DATABASE_URL: PRIMARY, READ_REPLICA_URL: `${PRIMARY},mysql://app:r@replica-2.internal/helpdesk` }, /^Invalid configuration: READ_REPLICA_URL must be one or more postgresql:\/\/ URLs/],
      ['REPLICA_MAX_LAG_MS', '0', { DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '0' }, /^Invalid configuration: REPLICA_MAX_LAG_MS must be between 1 and 3600000, got 0$/],
      ['REPLICA_MAX_LAG_MS', 'above an hour', { DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '3600001' }, /^Invalid configuration: REPLICA_MAX_LAG_MS must be between 1 and 3600000/],
      ['REPLICA_MAX_LAG_MS', 'negative', { DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '-1' }, /^Invalid configuration: REPLICA_MAX_LAG_MS must be an integer/],
      ['REPLICA_MAX_LAG_MS', 'not an integer', { DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '1.5' }, /^Invalid configuration: REPLICA_MAX_LAG_MS must be an integer/],
      ['REPLICA_MAX_LAG_MS', 'with a unit', { DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '1s' }, /^Invalid configuration: REPLICA_MAX_LAG_MS must be an integer/],
    ])('names %s when it is bad (%s), without a password in the message', (variable, _case, vars, message) => {
      let error: unknown;
      try {
        loadConfig(pg(vars));
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(variable);
      expect((error as Error).message).not.toMatch(/password|app:r@/);
    });
  });

  // Without HASH_KEY on PostgreSQL, the key was a constant written in src/config.ts: it
  // signs hd_oauth_session and the CSRF tokens, so anyone could forge a sign-in.
  describe('HASH_KEY on PostgreSQL', () => {
    const POSTGRES = 'postgresql://u@127.0.0.1:1/db';

    it.each<Record<string, string>>([{}, { NODE_ENV: 'staging' }, { NODE_ENV: 'Development' }])('is required unless NODE_ENV is development or test (%j)', (vars) => {
      expect(() => loadConfig(env({ DATABASE_URL: POSTGRES, ...vars }))).toThrow(
        new ConfigError(
          'HASH_KEY',
          'is required with DATABASE_URL (tokens, client secrets and sign-in sessions are signed with it; generate one with `openssl rand -hex 32`), unless NODE_ENV is development or test',
        ),
      );
    });

    it.each(['development', 'test'])('falls back to the development key with NODE_ENV=%s, with a warning naming HASH_KEY', (mode) => {
      const config = loadConfig(env({ DATABASE_URL: POSTGRES, NODE_ENV: mode }));
      expect(config.warnings).toEqual([expect.stringContaining('HASH_KEY is not set')]);
      // every process of one database agrees on it
      expect(loadConfig(env({ DATABASE_URL: POSTGRES, NODE_ENV: mode })).hashKey.equals(config.hashKey)).toBe(true);
    });

    it('warns about nothing with a HASH_KEY, or on the embedded database (its key is generated into DATA_DIR)', () => {
      expect(loadConfig(env({ DATABASE_URL: POSTGRES, HASH_KEY: 'k'.repeat(32) })).warnings).toEqual([]);
      expect(loadConfig(env({})).warnings).toEqual([]);
    });

    it('makes the server refuse to start without it, naming HASH_KEY, with a non-zero exit', async () => {
      const result = await runToExit(SERVER_JS, [], { DATABASE_URL: POSTGRES, DATA_DIR: data.path, NODE_ENV: undefined }, { timeoutMs: 30_000 });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('HASH_KEY is required with DATABASE_URL');
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });

    it('logs the warning at start when NODE_ENV=development lets it run without one', async () => {
      // nothing listens on port 1: the start fails after the configuration was accepted
      const result = await runToExit(SERVER_JS, [], { DATABASE_URL: POSTGRES, DATA_DIR: data.path, NODE_ENV: 'development' }, { timeoutMs: 30_000 });
      const warnings = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.level === 40);
      expect(warnings.map((w) => w.msg)).toEqual([expect.stringContaining('HASH_KEY is not set: using the fixed development key (NODE_ENV=development)')]);
    });
  });

  it('makes the server refuse to start, naming the variable, with a non-zero exit', async () => {
    const result = await runToExit(SERVER_JS, [], env({ PORT: 'abc' }), { timeoutMs: 30_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });
});
