// The hot statements as PL/pgSQL functions, so that their plans are cached in every server
// session, behind a transaction pooler too.
//
// Behind pgbouncer in transaction mode (DATABASE_URL?pgbouncer=true, docs/scaling.md) the
// service sends its statements unnamed: PostgreSQL parses, analyses and plans each one at every
// run, where a named statement is planned once per connection. For the big statements of the hot
// paths (a Bearer request's lookup, a token's creation: CTEs that join, write, audit and notify)
// that tripled PostgreSQL's CPU per request and halved throughput (bench/results/scaling.md).
// PL/pgSQL caches the plan of each statement of a function per server session, and server
// sessions outlive the pooler's transactions: `SELECT * FROM f($1, …)`, unnamed, costs a trivial
// parse and runs the cached plan.
//
// The statement stays written once, here in TypeScript, with its $1, $2, … (in PL/pgSQL they
// are the function's parameters): prisma/functions/<name>.sql is generated from it
// (`node dist/scripts/emit-sql-functions.js`; test/sql-functions.generated.test.ts fails when it
// is stale), and `npm run db:migration` turns a change into a migration like any function's.

export interface PlpgsqlFunction {
  /** the function's name (and its file: prisma/functions/<name>.sql) */
  name: string;
  /** what it is, for the file's header */
  about: string;
  /** the types of $1, $2, … in order */
  params: readonly string[];
  /** the columns it returns, [name, type], in the order the statement returns them */
  returns: readonly (readonly [string, string])[];
  /** the one statement it runs, reading $1, $2, … */
  statement: string;
}

/** The CREATE OR REPLACE FUNCTION of `f` (what prisma/functions/<name>.sql holds, after its header). */
export function functionSource(f: PlpgsqlFunction): string {
  const columns = f.returns.map(([name, type]) => `${name} ${type}`).join(', ');
  return (
    `CREATE OR REPLACE FUNCTION ${f.name}(${f.params.join(', ')})\n` +
    `RETURNS TABLE (${columns})\n` +
    // (the output columns are variables inside the function: a statement's own columns of the
    // same name must win, as they do outside it)
    `LANGUAGE plpgsql VOLATILE AS $fn$\n#variable_conflict use_column\nBEGIN\n  RETURN QUERY\n${f.statement};\nEND\n$fn$;\n`
  );
}

/** The statement the service sends: the function's rows, for the same parameters. */
export function callOf(f: PlpgsqlFunction): string {
  return `SELECT * FROM ${f.name}(${f.params.map((_, i) => `$${i + 1}`).join(', ')})`;
}
