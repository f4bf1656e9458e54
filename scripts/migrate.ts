// npm run db:migrate — applies pending migrations to DATABASE_URL or the embedded database.
import { databaseConnection, loadConfig } from '../src/config';
import { createDb } from '../src/db/create-db';
import { migrate } from '../src/db/migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  // (through DIRECT_URL when DATABASE_URL is a pooler: migrations hold a session lock; no replicas)
  const db = await createDb({ ...databaseConnection(config, { replicas: false }), poolSize: 2 });
  try {
    const applied = await migrate(db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  console.error(`error: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
