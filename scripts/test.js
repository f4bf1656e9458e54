#!/usr/bin/env node
// npm test: the suite in two jest runs — the parallel one, then test/serial (timing) alone,
// with nothing beside it — and, as the last words a person sees, the outcome of both and
// every suite that did not run on this machine, why, and how to run it (PostgreSQL-only
// suites without TEST_DATABASE_URL, browser tests without Chromium; one list for both
// runs, from test/helpers/skipped-tests.js). `npm test -- <jest arguments>` runs the
// parallel run with them (e.g. some files) and leaves the serial run out.
// Exits non-zero when a run failed.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { skipSummary } = require('../test/helpers/skipped-tests.js');

const root = path.resolve(__dirname, '..');
const report = path.join(os.tmpdir(), `npm-test-skips-${process.pid}.jsonl`);

/** One jest run; its figures as the reporter wrote them (undefined: jest ended before reporting). */
function jest(label, args) {
  const before = fs.existsSync(report) ? fs.readFileSync(report, 'utf8').split('\n').filter(Boolean).length : 0;
  const { status, signal } = spawnSync(process.execPath, ['--experimental-vm-modules', path.join(root, 'node_modules/jest/bin/jest.js'), ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, SKIPPED_TESTS_REPORT: report },
  });
  const lines = fs.existsSync(report) ? fs.readFileSync(report, 'utf8').split('\n').filter(Boolean) : [];
  const figures = lines.length > before ? JSON.parse(lines[lines.length - 1]) : undefined;
  return { label, ok: status === 0, status: signal ?? status, figures };
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const outcome = (run) =>
  run.figures
    ? `${run.label}: ${run.ok ? 'passed' : 'FAILED'} (${plural(run.figures.passed, 'test')} passed, ${run.figures.failed} failed)`
    : `${run.label}: ${run.ok ? 'passed' : `FAILED (jest exited ${run.status} before its report)`}`;

function main(extra) {
  const runs = [];
  try {
    runs.push(jest('parallel run', extra));
    const serialLeftOut = extra.length > 0 ? 'left out (jest arguments given)' : !runs[0].ok ? 'not run (the parallel run failed)' : undefined;
    if (!serialLeftOut) runs.push(jest('serial run (test/serial)', ['--testPathIgnorePatterns', '/node_modules/', '--runInBand', 'test/serial']));
    const skips = runs.flatMap((r) => r.figures?.skips ?? []);
    const lines = ['', '── npm test ──', ...runs.map(outcome)];
    if (serialLeftOut) lines.push(`serial run (test/serial): ${serialLeftOut}`);
    lines.push(skipSummary(skips, root), '');
    process.stdout.write(lines.join('\n'));
  } finally {
    fs.rmSync(report, { force: true });
  }
  process.exit(runs.every((r) => r.ok) ? 0 : 1);
}

main(process.argv.slice(2));
