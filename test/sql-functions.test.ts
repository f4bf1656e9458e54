import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ADVISORY_LOCKS, MIGRATION_LOCK_KEY } from '../src/db/advisory-locks';
import { MIGRATIONS_DIR } from '../src/db/schema-engine';
import { PROJECT_ROOT } from '../src/project-root';
import { migrationTexts, pendingFunctions, readCanonicalFunctions } from '../scripts/sql-functions';
import { freshPostgresDatabase, onPostgres } from './helpers/postgres';
import { createTestDb, type TestDb } from './helpers/test-db';

// Database functions have one source each, prisma/functions/<name>.sql; migrations
// inline those files verbatim (npm run db:migration). These tests fail when a file
// and the database's function differ after migrating, when a file changed without a
// migration that carries it, and when a function exists that has no file. Then the
// advisory-lock namespaces, declared once in src/db/advisory-locks.ts, and the
// upgrade of a database holding data to the rolling-window table and subdomains.

const FUNCTIONS = readCanonicalFunctions();

/** Every definition of the functions called `name` in the current schema, as the database prints them. */
async function definitions(sql: TestDb['sql'], name: string): Promise<string[]> {
  const rows = await sql<{ def: string }>(
    `SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p
      WHERE p.proname = $1 AND p.pronamespace = current_schema()::regnamespace ORDER BY p.oid`,
    [name],
  );
  return rows.map((r) => r.def);
}

describe('database functions: one canonical source each (prisma/functions)', () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDb();
  });
  afterAll(() => db.close());

  it('has the functions the service calls', () => {
    expect(FUNCTIONS.map((f) => f.name)).toEqual(
      expect.arrayContaining(['rate_window_take', 'create_callback_request', 'callback_request_lookups', 'account_subdomain_for', 'accounts_subdomain_default']),
    );
  });

  it('the migrations hold every file in its current text (npm run db:migration would inline nothing)', () => {
    expect(pendingFunctions().map((f) => f.file)).toEqual([]);
  });

  it.each(FUNCTIONS.map((f) => [f.name, f] as const))('the migrated database’s %s is exactly its file', async (name, fn) => {
    const before = await definitions(db.sql, name);
    expect(before).toHaveLength(1);
    // Re-running the file must change nothing (nor add an overload); rolled back either way.
    const after = await db
      .transaction(async (sql) => {
        await sql(fn.sql);
        throw Object.assign(new Error('roll back'), { definitions: await definitions(sql, name) });
      })
      .catch((err: Error & { definitions?: string[] }) => {
        if (!err.definitions) throw err;
        return err.definitions;
      });
    expect(after).toEqual(before);
  });

  it('every function of the schema has its file', async () => {
    const rows = await db.sql<{ name: string }>(
      `SELECT DISTINCT p.proname AS name FROM pg_proc p
        WHERE p.pronamespace = current_schema()::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
        ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual(FUNCTIONS.map((f) => f.name).sort());
  });
});

describe('advisory-lock namespaces (src/db/advisory-locks.ts)', () => {
  const values = Object.values(ADVISORY_LOCKS);

  it('are distinct', () => {
    expect(new Set(values).size).toBe(values.length);
    expect(MIGRATION_LOCK_KEY).toBe(ADVISORY_LOCKS.migration);
  });

  it('are the only ones used, in src/ and in the database functions', () => {
    const files = [
      ...readdirSync(path.join(PROJECT_ROOT, 'src'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.startsWith('generated'))
        .map((f) => path.join(PROJECT_ROOT, 'src', f)),
      ...FUNCTIONS.map((f) => path.join(PROJECT_ROOT, f.file)),
    ];
    const used: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/pg_advisory_\w*lock\w*\((\d+)/g)) used.push(`${path.relative(PROJECT_ROOT, file)}: ${m[1]}`);
      // create-db.ts names its key: it must be the declared one
      for (const m of text.matchAll(/MIGRATION_LOCK_KEY = (\d+)/g)) used.push(`${path.relative(PROJECT_ROOT, file)}: ${m[1]}`);
    }
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((u) => !values.includes(Number(u.split(': ')[1]) as never))).toEqual([]);
    expect(readFileSync(path.join(PROJECT_ROOT, 'prisma/functions/rate_window_take.sql'), 'utf8')).toContain(
      `pg_advisory_xact_lock(${ADVISORY_LOCKS.rateWindow}, hashtext(p_key))`,
    );
  });
});

/** A database to run migration scripts on, whole, outside the schema engine. */
async function scratchDatabase(): Promise<{ exec: (sql: string) => Promise<void>; query: <T>(sql: string) => Promise<T[]>; close: () => Promise<void> }> {
  if (!onPostgres) {
    const { PGlite } = await import('@electric-sql/pglite');
    const client = new PGlite();
    return {
      exec: async (sql) => void (await client.exec(sql)),
      query: async (sql) => (await client.query(sql)).rows as never,
      close: () => client.close(),
    };
  }
  const fresh = await freshPostgresDatabase();
  const client = new pg.Client({ connectionString: fresh.url });
  await client.connect();
  return {
    exec: async (sql) => void (await client.query(sql)),
    query: async (sql) => (await client.query(sql)).rows,
    async close() {
      await client.end();
      await fresh.drop();
    },
  };
}

describe('upgrading a database that holds data (migration rate_windows_and_subdomains)', () => {
  const folders = readdirSync(MIGRATIONS_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  const upgrade = folders.findIndex((f) => f.endsWith('_rate_windows_and_subdomains'));
  const texts = migrationTexts();
  let db: Awaited<ReturnType<typeof scratchDatabase>>;

  beforeAll(async () => {
    db = await scratchDatabase();
    for (const sql of texts.slice(0, upgrade)) await db.exec(sql);
    await db.exec(`
      INSERT INTO accounts (id, name) VALUES (1, 'Acme Inc.'), (2, 'acme inc'), (3, '!!!'), (4, 'account'), (5, 'ACCOUNT'),
        (6, '${'Very Long Name '.repeat(8)}'), (7, 'acme-inc-2');
      INSERT INTO rate_limit_hits (account_id, bucket, created_at)
        SELECT 1, 'callback_requests', now() - make_interval(secs => g) FROM generate_series(1, 12) AS g;
      INSERT INTO login_failures (email_key, created_at) VALUES ('someone@example.com', now());
    `);
    await db.exec(texts[upgrade]);
  });
  afterAll(() => db?.close());

  it('gives every account a unique subdomain from its name, in id order, the id appended when taken', async () => {
    const rows = await db.query<{ id: number; subdomain: string }>('SELECT id::int AS id, subdomain FROM accounts ORDER BY id');
    expect(rows).toEqual([
      { id: 1, subdomain: 'acme-inc' },
      { id: 2, subdomain: 'acme-inc-2' },
      { id: 3, subdomain: 'account' },
      { id: 4, subdomain: 'account-4' },
      { id: 5, subdomain: 'account-5' },
      { id: 6, subdomain: 'very-long-name-very-long-name-very-long-name-very-long-name-ver' },
      // its own slug is account 2's subdomain
      { id: 7, subdomain: 'acme-inc-2-7' },
    ]);
    for (const r of rows) expect(r.subdomain).toMatch(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
  });

  it('derives the subdomain of a new account without one, and refuses a bad or taken one', async () => {
    await db.exec(`INSERT INTO accounts (id, name) VALUES (8, 'Acme Inc')`);
    expect(await db.query(`SELECT subdomain FROM accounts WHERE id = 8`)).toEqual([{ subdomain: 'acme-inc-8' }]);
    await expect(db.exec(`INSERT INTO accounts (id, name, subdomain) VALUES (9, 'bad', 'Bad_Name')`)).rejects.toThrow(/accounts_subdomain_format/);
    await expect(db.exec(`INSERT INTO accounts (id, name, subdomain) VALUES (10, 'taken', 'acme-inc')`)).rejects.toThrow(/accounts_subdomain_key/);
  });

  it('carries the callback limit’s hits over under their key, and drops the old tables and function', async () => {
    const [window] = await db.query<{ used: number; allowed: boolean }>(`SELECT used, allowed FROM rate_window_take('callback_requests:1', 30, 600)`);
    expect(window).toEqual({ used: 12, allowed: true });
    const tables = await db.query<{ name: string | null }>(`SELECT to_regclass('rate_limit_hits')::text AS name UNION ALL SELECT to_regclass('login_failures')::text`);
    expect(tables).toEqual([{ name: null }, { name: null }]);
    expect(await db.query(`SELECT proname FROM pg_proc WHERE proname = 'rate_limit_take'`)).toEqual([]);
  });
});
