import { readFileSync } from 'node:fs';
import { GENERATED_FUNCTIONS, generatedFile, generatedPath } from '../scripts/emit-sql-functions';
import { callOf } from '../src/db/sql-function';
import { createTestDb, type TestDb } from './helpers/test-db';

// The hot statements that run as PL/pgSQL functions (src/db/sql-function.ts) are written once,
// in TypeScript: prisma/functions/<name>.sql is generated from them, and a migration inlines that
// file. A statement changed in TypeScript and not re-emitted would run its old text from the
// database: this fails first, saying what to run.

describe('the generated PL/pgSQL functions', () => {
  it.each(GENERATED_FUNCTIONS.map((f) => [f.name, f] as const))('prisma/functions/%s.sql is the statement of the TypeScript source', (_name, f) => {
    const message = `${generatedPath(f)} is stale: run \`npx tsc -p tsconfig.build.json && node dist/scripts/emit-sql-functions.js\`, then \`npm run db:migration -- <name>\``;
    expect({ file: readFileSync(generatedPath(f), 'utf8'), message }).toEqual({ file: generatedFile(f), message });
  });

  describe('in a migrated database', () => {
    let db: TestDb;
    beforeAll(async () => {
      db = await createTestDb();
    });
    afterAll(() => db.close());

    it.each(GENERATED_FUNCTIONS.map((f) => [f.name, f] as const))('%s takes the parameters and returns the columns the TypeScript declares', async (_name, f) => {
      // (the function's own signature, as the migrated database has it)
      const [row] = await db.sql<{ args: string; result: string }>(
        "SELECT pg_get_function_identity_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result FROM pg_proc p WHERE p.proname = $1",
        [f.name],
      );
      const normalize = (t: string) => t.replace('timestamptz', 'timestamp with time zone');
      expect(row.args.split(', ')).toEqual(f.params.map(normalize));
      expect(row.result).toBe(`TABLE(${f.returns.map(([name, type]) => `${name} ${normalize(type)}`).join(', ')})`);
      expect(callOf(f)).toBe(`SELECT * FROM ${f.name}(${f.params.map((_, i) => `$${i + 1}`).join(', ')})`);
    });
  });
});
