import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from './helpers/processes';

// Honest test output: `npm test` (scripts/test.js) ends by naming every suite that did not
// run on this machine — file › describe block —, why, and how to run it; and .ci/run's
// `node test/helpers/skipped-tests.js <jest --json file> <allowed kinds>` still fails a run
// that skipped what it must run.

jest.setTimeout(180_000);

function run(command: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    // one pipe for stdout and stderr: the output in the order a person sees it
    execFile('bash', ['-c', `${command} 2>&1`], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout }),
    );
  });
}

describe('the end of npm test names what it skipped', () => {
  it('without TEST_DATABASE_URL and without Chromium: the last lines list each skipped suite, why, and how to run it', async () => {
    // a file that runs, a PostgreSQL-only file, a browser file (Chromium made missing); CI unset: a missing Chromium skips
    const { code, output } = await run('node scripts/test.js test/scopes.test.ts test/oauth-tokens.processes.test.ts test/graphiql.browser.test.ts', {
      TEST_DATABASE_URL: '', CI: '', CHROMIUM_PATH: '/nonexistent/chromium',
    });
    expect(code).toBe(0);
    const end = output.slice(output.lastIndexOf('── npm test ──')).trimEnd().split('\n');
    expect(end[1]).toMatch(/^parallel run: passed \(\d+ tests passed, 0 failed\)$/);
    expect(end[2]).toBe('serial run (test/serial): left out (jest arguments given)');
    expect(end.slice(3)).toEqual([
      'Skipped: 2 suites (7 tests) did not run here:',
      expect.stringMatching(/^ {2}needs-postgres \(1 suite, 1 test\) — to run them: set TEST_DATABASE_URL=postgresql:\/\/… .* npm test$/),
      '    test/oauth-tokens.processes.test.ts › token revocation across server processes: runs on a PostgreSQL server only (TEST_DATABASE_URL) (1 test)',
      '  needs-chromium (1 suite, 6 tests) — to run them: install Chromium at /usr/bin/chromium: apt-get install chromium (or set CHROMIUM_PATH)',
      '    test/graphiql.browser.test.ts › GraphiQL at /graphiql in a real browser: no Chromium at /nonexistent/chromium (6 tests)',
    ]);
    // said once, at the end: the jest runs themselves leave it to scripts/test.js
    expect(output.match(/did not run here/g)).toHaveLength(1);
  });
});

describe('node test/helpers/skipped-tests.js <jest --json file> <allowed kinds> (.ci/run)', () => {
  const data = tempDir('skipped-tests-');
  afterAll(() => data.remove());
  const file = path.join(data.path, 'jest.json');
  writeFileSync(
    file,
    JSON.stringify({
      testResults: [
        {
          name: path.join(ROOT, 'test/a.test.ts'),
          assertionResults: [
            { status: 'passed', ancestorTitles: ['outer'], title: 'runs', fullName: 'outer runs' },
            ...['one', 'two'].map((title) => ({
              status: 'pending', ancestorTitles: ['outer', 'on PostgreSQL [skipped: needs-postgres — runs on a PostgreSQL server only (TEST_DATABASE_URL)]'], title, fullName: `outer on PostgreSQL ${title}`,
            })),
          ],
        },
        {
          name: path.join(ROOT, 'test/b.test.ts'),
          assertionResults: [{ status: 'pending', ancestorTitles: ['in a browser [skipped: needs-chromium — no Chromium at /x]'], title: 'clicks', fullName: 'in a browser clicks' }],
        },
      ],
    }),
  );

  it('lists the skipped suites and passes when every kind is allowed', async () => {
    const { code, output } = await run(`node test/helpers/skipped-tests.js ${file} needs-postgres,needs-chromium`);
    expect(code).toBe(0);
    expect(output.split('\n')).toEqual([
      'skipped:',
      expect.stringMatching(/^ {2}needs-postgres \(1 suite, 2 tests\) — to run them: /),
      '    test/a.test.ts › outer › on PostgreSQL: runs on a PostgreSQL server only (TEST_DATABASE_URL) (2 tests)',
      expect.stringMatching(/^ {2}needs-chromium \(1 suite, 1 test\) — to run them: /),
      '    test/b.test.ts › in a browser: no Chromium at /x (1 test)',
      '',
    ]);
  });

  it('fails, naming the file, when a run skipped a kind it must run', async () => {
    const { code, output } = await run(`node test/helpers/skipped-tests.js ${file} needs-postgres`);
    expect(code).toBe(1);
    expect(output).toContain('not allowed to skip in this run (allowed: needs-postgres):');
    expect(output).toContain(`files that skipped what they must run: ${path.join(ROOT, 'test/b.test.ts')}`);
  });
});
