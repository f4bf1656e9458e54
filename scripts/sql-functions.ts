// The database functions' canonical sources: prisma/functions/<name>.sql, one
// function per file, each a single CREATE OR REPLACE FUNCTION <name>(...) with
// its comments. A migration never holds its own version of a function: it
// inlines the canonical file verbatim between two marker lines, which
// `npm run db:migration` writes for every file whose text differs from its last
// inlined copy (test/sql-functions.test.ts checks both the migrations and a
// migrated database against these files).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PRISMA_DIR, readMigrations } from '../src/db/schema-engine';

export const FUNCTIONS_DIR = path.join(PRISMA_DIR, 'functions');

export interface CanonicalFunction {
  /** the function's name, which is the file's name */
  name: string;
  /** relative to the project root, e.g. prisma/functions/rate_window_take.sql */
  file: string;
  sql: string;
}

export function readCanonicalFunctions(dir = FUNCTIONS_DIR): CanonicalFunction[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.sql'.length);
      const sql = readFileSync(path.join(dir, f), 'utf8');
      if (!new RegExp(`^CREATE OR REPLACE FUNCTION ${name}\\(`, 'm').test(sql)) {
        throw new Error(`prisma/functions/${f} must contain "CREATE OR REPLACE FUNCTION ${name}(" (one function per file, named after it)`);
      }
      return { name, file: `prisma/functions/${f}`, sql };
    });
}

const begin = (fn: CanonicalFunction) => `-- >>> ${fn.file} (inlined verbatim by npm run db:migration; edit the file, not this copy)\n`;
const end = (fn: CanonicalFunction) => `-- <<< ${fn.file}\n`;

/** A canonical function as a migration holds it. */
export function inlineFunction(fn: CanonicalFunction): string {
  return `${begin(fn)}${fn.sql.endsWith('\n') ? fn.sql : `${fn.sql}\n`}${end(fn)}`;
}

/** The copy of fn inlined by the last migration that inlines it, if any. */
export function lastInlinedCopy(fn: CanonicalFunction, migrationSqls: string[]): string | undefined {
  for (let i = migrationSqls.length - 1; i >= 0; i--) {
    const sql = migrationSqls[i];
    const from = sql.lastIndexOf(begin(fn));
    if (from < 0) continue;
    const to = sql.indexOf(end(fn), from);
    if (to < 0) throw new Error(`a migration opens ${fn.file} without closing it`);
    return sql.slice(from + begin(fn).length, to);
  }
  return undefined;
}

/** The canonical functions that the migrations do not hold in their current text (to inline into the next one). */
export function pendingFunctions(functions = readCanonicalFunctions(), migrationSqls = migrationTexts()): CanonicalFunction[] {
  const normalized = (sql: string) => (sql.endsWith('\n') ? sql : `${sql}\n`);
  return functions.filter((fn) => lastInlinedCopy(fn, migrationSqls) !== normalized(fn.sql));
}

/** Every migration.sql, oldest first. */
export function migrationTexts(): string[] {
  return readMigrations().migrationDirectories.map((m) => m.migrationFile.content.value);
}
