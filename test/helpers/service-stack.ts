// The service as it runs in production, for the fault and soak tests: a
// PostgreSQL server of the test's own (test/helpers/pg-server.ts), real server
// processes on it, and an admin with a read/write Bearer token.
import pg from 'pg';
import { startPgServer, type PgServer } from './pg-server';
import { killAll, startServer, type ServerHandle } from './processes';
import { basicHeader } from './test-app';
import { call } from './traffic';

export const ADMIN = { email: 'admin@example.com', password: 'faults-admin-password' };
export const HASH_KEY = 'faults-and-soak-hash-key-0123456789abcdef';

export interface Stack {
  pg: PgServer;
  databaseUrl: string;
  /** environment of every server process */
  env: Record<string, string>;
  /** a direct connection pool on the service's database, for checks */
  sql: pg.Pool;
  adminBasic: string;
  /** `Bearer <token>` of the admin, scopes read and write */
  adminBearer: string;
  /** the client of that token */
  clientId: number;
  startServer(extraEnv?: Record<string, string>): Promise<ServerHandle>;
  /** Kills every server process, closes the pool, stops and removes PostgreSQL. */
  close(): Promise<void>;
}

export async function startStack(extraEnv: Record<string, string> = {}): Promise<{ stack: Stack; server: ServerHandle }> {
  const pgServer = await startPgServer();
  let sql: pg.Pool | undefined;
  try {
    const databaseUrl = await pgServer.createDatabase('service');
    const env = { DATABASE_URL: databaseUrl, ADMIN_PASSWORD: ADMIN.password, HASH_KEY, DB_POOL_SIZE: '10', ...extraEnv };
    const first = await startServer(env);
    sql = new pg.Pool({ connectionString: databaseUrl, max: 3 });
    // the checking pool must survive the outages the tests cause
    sql.on('error', () => {});
    const adminBasic = basicHeader(ADMIN.email, ADMIN.password);
    const client = await call('setup', `${first.url}/api/v2/oauth/clients.json`, {
      method: 'POST',
      headers: { authorization: adminBasic },
      body: { name: 'fault-tests', scopes: 'read write', redirect_uris: 'https://faults.example/cb' },
    });
    if (client.status !== 201) throw new Error(`setup: creating a client answered ${client.status} ${JSON.stringify(client.body)}`);
    const clientId = (client.body as { id: number }).id;
    const token = await call('setup', `${first.url}/api/v2/oauth/tokens.json`, {
      method: 'POST',
      headers: { authorization: adminBasic },
      body: { token: { client_id: clientId, scopes: ['read', 'write'] } },
    });
    if (token.status !== 201) throw new Error(`setup: creating a token answered ${token.status} ${JSON.stringify(token.body)}`);
    const pool = sql;
    const stack: Stack = {
      pg: pgServer,
      databaseUrl,
      env,
      sql: pool,
      adminBasic,
      adminBearer: `Bearer ${(token.body as { token: { token: string } }).token.token}`,
      clientId,
      startServer: (more = {}) => startServer({ ...env, ...more }),
      async close() {
        await killAll();
        await pool.end().catch(() => {});
        await pgServer.cleanup();
      },
    };
    return { stack, server: first };
  } catch (err) {
    await killAll();
    await sql?.end().catch(() => {});
    await pgServer.cleanup();
    throw err;
  }
}
