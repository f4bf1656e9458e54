// node dist/scripts/emit-sql-functions.js — writes prisma/functions/<name>.sql for each hot
// statement the service runs as a PL/pgSQL function (src/db/sql-function.ts), from its one
// source in TypeScript. Then `npm run db:migration -- <name>` inlines what changed into a
// migration. test/sql-functions.generated.test.ts fails while a file is stale.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { functionSource, type PlpgsqlFunction } from '../src/db/sql-function';
import { TOKEN_INSERT } from '../src/domain/oauth-tokens/oauth-token.repository';
import { PRESENTED_TOKEN } from '../src/domain/oauth-tokens/presented-token.repository';
import { FUNCTIONS_DIR } from './sql-functions';

/** Every statement that runs as a generated function. */
export const GENERATED_FUNCTIONS: readonly PlpgsqlFunction[] = [PRESENTED_TOKEN, TOKEN_INSERT];

/** What prisma/functions/<name>.sql holds for `f`. */
export function generatedFile(f: PlpgsqlFunction): string {
  return (
    `-- GENERATED from ${f.name}'s statement in src/ (node dist/scripts/emit-sql-functions.js): edit the TypeScript, not this file.\n` +
    `-- ${f.about}\n` +
    '-- A PL/pgSQL function so that its plan is cached per server session, behind a transaction pooler too (src/db/sql-function.ts).\n' +
    functionSource(f)
  );
}

export const generatedPath = (f: PlpgsqlFunction) => path.join(FUNCTIONS_DIR, `${f.name}.sql`);

if (require.main === module) {
  for (const f of GENERATED_FUNCTIONS) {
    writeFileSync(generatedPath(f), generatedFile(f));
    console.log(`wrote ${path.relative(process.cwd(), generatedPath(f))}`);
  }
}
