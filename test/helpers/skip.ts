// The one way a test file skips: describeIf(condition, kind, why). A skipped block
// carries its kind and reason in its title, so that the end of `npm test` lists it
// (test/helpers/skipped-tests.js, a jest reporter) and .ci/run can tell a skip a run
// allows (PostgreSQL-only suites on the PGlite runs, PGlite-only ones on PostgreSQL)
// from one it must not have. A skip for a missing tool (Chromium, curl, pgbouncer) is a failure
// under CI=true: CI installs them, so there it can only mean the tests did not run.

/**
 * What a skipped block needs and this run does not have. needs-topology: the multi-process
 * topology of scripts/topology.sh (PostgreSQL, a replica, pgbouncer, three service processes),
 * asked for with TOPOLOGY_TEST=1 (CI runs it in a step of its own).
 */
export type SkipKind = 'needs-postgres' | 'needs-pglite' | 'needs-chromium' | 'needs-curl' | 'needs-pgbouncer' | 'needs-topology';

/** Kinds CI has by construction: a skip of one of them under CI=true fails instead. */
const REQUIRED_IN_CI: ReadonlySet<SkipKind> = new Set(['needs-chromium', 'needs-curl', 'needs-pgbouncer']);

/** The title suffix of a skipped block; skipped-tests.js reads it back (keep both in step). */
const skipTag = (kind: SkipKind, why: string) => `[skipped: ${kind} — ${why}]`;

/** `describe` when `condition` holds; otherwise a skipped block that says why (or, in CI, a failing one). */
export function describeIf(condition: boolean, kind: SkipKind, why: string): jest.Describe {
  if (condition) return describe;
  if (process.env.CI === 'true' && REQUIRED_IN_CI.has(kind)) {
    const failing = (name: string) =>
      describe(name, () => {
        it(`cannot run in CI (${kind}): ${why}`, () => {
          throw new Error(`${name}: this block must run in CI but cannot: ${why}`);
        });
      });
    return failing as unknown as jest.Describe;
  }
  const skipped = (name: string, fn: jest.EmptyFunction) => describe.skip(`${name} ${skipTag(kind, why)}`, fn);
  return Object.assign(skipped, { each: describe.skip.each, only: describe.only, skip: describe.skip }) as unknown as jest.Describe;
}
