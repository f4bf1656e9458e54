import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR } from '../src/db/schema-engine';
import { hmacHex } from '../src/domain/crypto';
import { createServices } from '../src/domain/services';
import { DEFAULT_LIMITS, TEST_HASH_KEY } from './helpers/test-app';
import { createTestDb } from './helpers/test-db';

// Migration 20261123180000_oauth_grants moves every client's secret into
// oauth_client_secrets before dropping the old columns: no client loses its secret.

const MIGRATION = '20261123180000_oauth_grants';
const sqlOf = (name: string) => readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8');

it('keeps each existing client\'s secret working across the migration', async () => {
  const db = await createTestDb({ migrate: false });
  try {
    const before = readdirSync(MIGRATIONS_DIR).filter((n) => /^\d{14}_/.test(n) && n < MIGRATION).sort();
    // each script as one simple-protocol query, on both databases
    await db.transaction(async () => undefined, before.map(sqlOf).join('\n'));
    await db.sql(`INSERT INTO accounts (name) VALUES ('legacy')`);
    await db.sql(
      `INSERT INTO oauth_clients (account_id, name, identifier, secret_hash, secret_prefix, client_type, scopes, redirect_uris, updated_at)
       VALUES (1, 'old app', 'legacy-client', $1, 'legacy-sec', 'confidential', 'read write', ARRAY['https://a.example/cb'], '2026-01-02T03:04:05Z')`,
      [hmacHex(TEST_HASH_KEY, 'legacy-secret-value')],
    );
    await db.transaction(async () => undefined, sqlOf(MIGRATION));

    const rows = await db.sql<{ client_id: string; secret_prefix: string; expires_at: Date | null; created_at: Date }>(
      'SELECT client_id::text, secret_prefix, expires_at, created_at FROM oauth_client_secrets',
    );
    expect(rows).toEqual([{ client_id: '1', secret_prefix: 'legacy-sec', expires_at: null, created_at: new Date('2026-01-02T03:04:05Z') }]);
    const columns = await db.sql<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_name = 'oauth_clients'`);
    expect(columns.map((c) => c.column_name)).not.toEqual(expect.arrayContaining(['secret_hash']));

    // and every later migration (the services read today's columns): the secret still works
    const after = readdirSync(MIGRATIONS_DIR).filter((n) => /^\d{14}_/.test(n) && n > MIGRATION).sort();
    await db.transaction(async () => undefined, after.map(sqlOf).join('\n'));
    const services = createServices({ db, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS });
    expect(await services.oauthClients.verifySecret('legacy-client', 'legacy-secret-value')).toBe(true);
    expect(await services.oauthClients.verifySecret('legacy-client', 'something-else')).toBe(false);
  } finally {
    await db.close();
  }
});
