// Skipped tests, said out loud. Two uses of one reading of jest's results:
//  - a jest reporter (jest.config.js `reporters`): at the end of a run, every skipped
//    or todo test, by file, with why (test/helpers/skip.ts puts the kind and the reason
//    in the skipped block's title; anything else skipped says "no reason given");
//  - `node test/helpers/skipped-tests.js <jest --json file> [allowed kind,...]`, for
//    .ci/run: prints the same list and the count, and exits 1 naming each file that
//    skipped a test whose kind the run does not allow (a skip with no kind never is).
// Plain JavaScript: jest loads reporters without transforming them.

const TAG = /\[skipped: ([\w-]+) — (.*)\]$/;

/** Every skipped (pending) or todo test of jest's results (reporter or --json shape). */
function skippedTests(results) {
  const out = [];
  for (const file of results.testResults ?? []) {
    const path = file.testFilePath ?? file.name;
    for (const test of file.testResults ?? file.assertionResults ?? []) {
      if (test.status !== 'pending' && test.status !== 'todo' && test.status !== 'skipped') continue;
      const tagged = [...(test.ancestorTitles ?? []), test.title].map((t) => TAG.exec(t)).find(Boolean);
      out.push({
        file: path,
        test: test.fullName ?? [...test.ancestorTitles, test.title].join(' '),
        kind: tagged ? tagged[1] : test.status === 'todo' ? 'todo' : undefined,
        reason: tagged ? tagged[2] : test.status === 'todo' ? 'test.todo: not written yet' : 'no reason given (describe.skip / it.skip outside test/helpers/skip.ts)',
      });
    }
  }
  return out;
}

/** Lines for a person: one per file and reason, with how many tests it covers. */
function describeSkips(skips, root = process.cwd()) {
  const groups = new Map();
  for (const s of skips) {
    const key = `${s.file.startsWith(root) ? s.file.slice(root.length + 1) : s.file}: ${s.kind ? `${s.kind} — ` : ''}${s.reason}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups].map(([key, n]) => `  ${key} (${n} test${n === 1 ? '' : 's'})`);
}

class SkippedTestsReporter {
  constructor(globalConfig) {
    this.filtered = Boolean(globalConfig?.testNamePattern);
  }

  onRunComplete(_contexts, results) {
    // with -t, the tests it leaves out are pending too: those are not skips to report
    const skips = skippedTests(results).filter((s) => !(this.filtered && s.kind === undefined));
    if (skips.length === 0) return;
    process.stderr.write(`\nSkipped: ${skips.length} test${skips.length === 1 ? '' : 's'}\n${describeSkips(skips).join('\n')}\n`);
  }
}

function main([file, allowed = '']) {
  const results = require(require('node:path').resolve(file));
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
if (require.main === module) main(process.argv.slice(2));
