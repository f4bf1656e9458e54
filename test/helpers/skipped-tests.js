// Skipped tests, said out loud: per suite (file › describe block), why it did not run
// here, and how to run it. One reading of jest's results, three uses:
//  - a jest reporter (jest.config.js `reporters`): at the end of a jest run, the suites
//    it skipped (test/helpers/skip.ts puts the kind and the reason in the skipped
//    block's title; anything else skipped says "no reason given"). Under `npm test`
//    (scripts/test.js sets SKIPPED_TESTS_REPORT) it appends its figures to that file
//    instead, and scripts/test.js prints one list for both jest runs, as the last words;
//  - `node test/helpers/skipped-tests.js <jest --json file> [allowed kind,...]`, for
//    .ci/run: prints the same list, and exits 1 naming each file that skipped a test
//    whose kind the run does not allow (a skip with no kind never is).
// Plain JavaScript: jest loads reporters without transforming them.

const fs = require('node:fs');
const path = require('node:path');

const TAG = /\s*\[skipped: ([\w-]+) — (.*)\]$/;

/** How to run what a kind of skip left out (the README's "Testing" says more). */
const HOW_TO_RUN = {
  'needs-postgres':
    'set TEST_DATABASE_URL=postgresql://… to a PostgreSQL server where the tests may create databases, e.g. TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npm test',
  'needs-pglite': 'run without TEST_DATABASE_URL (plain npm test, on the embedded PGlite)',
  'needs-chromium': 'install Chromium at /usr/bin/chromium: apt-get install chromium (or set CHROMIUM_PATH)',
  'needs-curl': 'install curl: apt-get install curl',
  'needs-pgbouncer': 'install pgbouncer: apt-get install pgbouncer',
  'needs-topology':
    'TOPOLOGY_TEST=1 npm test -- test/topology.test.ts (needs PostgreSQL and pgbouncer: apt-get install postgresql pgbouncer; about 40 s)',
  todo: 'write them (test.todo)',
};
const NO_REASON = 'no reason given (describe.skip / it.skip outside test/helpers/skip.ts)';

/** Every skipped (pending) or todo test of jest's results (reporter or --json shape), with its suite. */
function skippedTests(results) {
  const out = [];
  for (const file of results.testResults ?? []) {
    const filePath = file.testFilePath ?? file.name;
    for (const test of file.testResults ?? file.assertionResults ?? []) {
      if (test.status !== 'pending' && test.status !== 'todo' && test.status !== 'skipped') continue;
      const titles = test.ancestorTitles ?? [];
      // the suite: the describe blocks down to the one that skipped (its tag taken off), or all of them
      const tagged = titles.findIndex((t) => TAG.test(t));
      const suite = (tagged >= 0 ? titles.slice(0, tagged + 1) : titles).map((t) => t.replace(TAG, ''));
      const tag = tagged >= 0 ? TAG.exec(titles[tagged]) : TAG.exec(test.title);
      out.push({
        file: filePath,
        suite: suite.join(' › '),
        test: test.fullName ?? [...titles, test.title].join(' '),
        kind: tag ? tag[1] : test.status === 'todo' ? 'todo' : undefined,
        reason: tag ? tag[2] : test.status === 'todo' ? 'test.todo: not written yet' : NO_REASON,
      });
    }
  }
  return out;
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Lines for a person: by kind, how to run them; under it, one line per suite
 * (file › describe) with why it did not run and how many tests it holds.
 */
function describeSkips(skips, root = process.cwd()) {
  const kinds = new Map();
  for (const s of skips) {
    const kind = s.kind ?? 'no-reason';
    if (!kinds.has(kind)) kinds.set(kind, new Map());
    const file = s.file.startsWith(root) ? s.file.slice(root.length + 1) : s.file;
    const key = `${file}${s.suite ? ` › ${s.suite}` : ''}: ${s.reason}`;
    const suites = kinds.get(kind);
    suites.set(key, (suites.get(key) ?? 0) + 1);
  }
  const lines = [];
  for (const [kind, suites] of kinds) {
    const tests = [...suites.values()].reduce((a, b) => a + b, 0);
    const how = HOW_TO_RUN[kind];
    lines.push(`  ${kind} (${plural(suites.size, 'suite')}, ${plural(tests, 'test')})${how ? ` — to run them: ${how}` : ''}`);
    for (const [key, n] of suites) lines.push(`    ${key} (${plural(n, 'test')})`);
  }
  return lines;
}

/** The block that ends a run: what did not run, per suite, or that everything ran. */
function skipSummary(skips, root) {
  if (skips.length === 0) return 'Skipped: nothing — every suite ran.';
  const suites = new Set(skips.map((s) => `${s.file}\u0000${s.suite}`)).size;
  return `Skipped: ${plural(suites, 'suite')} (${plural(skips.length, 'test')}) did not run here:\n${describeSkips(skips, root).join('\n')}`;
}

class SkippedTestsReporter {
  constructor(globalConfig) {
    this.filtered = Boolean(globalConfig?.testNamePattern);
  }

  onRunComplete(_contexts, results) {
    // with -t, the tests it leaves out are pending too: those are not skips to report
    const skips = skippedTests(results).filter((s) => !(this.filtered && s.kind === undefined));
    const report = process.env.SKIPPED_TESTS_REPORT;
    if (report) {
      // npm test (scripts/test.js) says it once for both runs, at the very end
      const figures = { passed: results.numPassedTests, failed: results.numFailedTests + results.numRuntimeErrorTestSuites, skips };
      fs.appendFileSync(report, `${JSON.stringify(figures)}\n`);
      return;
    }
    if (skips.length === 0) return;
    process.stderr.write(`\n${skipSummary(skips)}\n`);
  }
}

function main([file, allowed = '']) {
  const results = require(path.resolve(file));
  const skips = skippedTests(results);
  const allow = new Set(allowed.split(',').filter(Boolean));
  if (skips.length) console.log(`skipped:\n${describeSkips(skips).join('\n')}`);
  const refused = skips.filter((s) => !allow.has(s.kind));
  if (refused.length) {
    const files = [...new Set(refused.map((s) => s.file))];
    console.log(`not allowed to skip in this run (allowed: ${[...allow].join(', ') || 'nothing'}):\n${describeSkips(refused).join('\n')}`);
    console.log(`files that skipped what they must run: ${files.join(', ')}`);
    process.exit(1);
  }
}

module.exports = SkippedTestsReporter;
// for scripts/test.js
module.exports.skipSummary = skipSummary;
if (require.main === module) main(process.argv.slice(2));
