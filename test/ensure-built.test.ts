import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from './helpers/processes';

// README, "Deploying": `npm run build` once with the dev dependencies, `npm prune --omit=dev`,
// then `NODE_ENV=production npm start` starts from dist/ and runs no build tool. Before each
// start, scripts/ensure-built.js then only checks that dist/ was built from these sources,
// and otherwise says in one line to run `npm run build` (it once ran graphql-codegen, which a
// production install does not have: "build step failed: graphql-codegen …").
// Each case runs the real script in a folder of its own, laid out like the project.

interface Run {
  code: number | null;
  stderr: string;
}

let project: ReturnType<typeof tempDir>;
const at = (p: string) => path.join(project.path, p);
const write = (p: string, text: string, secondsAgo: number) => {
  mkdirSync(path.dirname(at(p)), { recursive: true });
  writeFileSync(at(p), text);
  const when = new Date(Date.now() - secondsAgo * 1000);
  utimesSync(at(p), when, when);
};
/** node_modules/.bin/<name> that leaves a mark when it runs */
const fakeTool = (name: string) => {
  write(`node_modules/.bin/${name}`, `#!/bin/sh\ntouch "${at(`ran-${name}`)}"\n`, 0);
  chmodSync(at(`node_modules/.bin/${name}`), 0o755);
};

function ensureBuilt(env: Record<string, string>, args: string[] = []): Promise<Run> {
  const base = { ...process.env };
  delete base.NODE_ENV;
  return new Promise((resolve) => {
    execFile(process.execPath, [at('scripts/ensure-built.js'), ...args], { cwd: project.path, env: { ...base, ...env } }, (err, _stdout, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, stderr }),
    );
  });
}

beforeEach(() => {
  project = tempDir('ensure-built-');
  mkdirSync(at('scripts'));
  copyFileSync(path.join(ROOT, 'scripts/ensure-built.js'), at('scripts/ensure-built.js'));
  utimesSync(at('scripts/ensure-built.js'), new Date(Date.now() - 600_000), new Date(Date.now() - 600_000));
  write('package.json', '{}', 600);
  write('src/main.ts', '// the sources', 600);
});
afterEach(() => project.remove());

describe('a production start (dev dependencies pruned, or NODE_ENV=production) never builds', () => {
  it('starts when dist/ was built after the last change to the sources', async () => {
    write('dist/.built', 'built', 60);
    expect(await ensureBuilt({})).toEqual({ code: 0, stderr: '' });
    expect(await ensureBuilt({ NODE_ENV: 'production' })).toEqual({ code: 0, stderr: '' });
  });

  it('refuses in one line, naming `npm run build`, when dist/ is missing', async () => {
    const run = await ensureBuilt({ NODE_ENV: 'production' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^dist\/ is not built, .*run `npm run build` first/)]);
  });

  it('refuses when a source changed since the build, naming it, and runs no build tool even where the tools are installed', async () => {
    for (const tool of ['prisma', 'graphql-codegen', 'tsc']) fakeTool(tool);
    write('dist/.built', 'built', 300);
    write('src/main.ts', '// changed after the build', 10);
    const production = await ensureBuilt({ NODE_ENV: 'production' });
    expect(production.code).toBe(1);
    expect(production.stderr.trim().split('\n')).toEqual([
      'dist/ is older than src/main.ts, and NODE_ENV=production never builds at start: run `npm run build` again (it needs the dev dependencies: `npm ci`)',
    ]);
    expect(['prisma', 'graphql-codegen', 'tsc'].filter((tool) => existsSync(at(`ran-${tool}`)))).toEqual([]);
  });

  it('refuses the same way when the dev dependencies are not installed (no NODE_ENV)', async () => {
    write('dist/.built', 'built', 300);
    write('package.json', '{"changed": true}', 10);
    const run = await ensureBuilt({});
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'dist/ is older than package.json, and the build tools (dev dependencies) are not installed: run `npm run build` again (it needs the dev dependencies: `npm ci`)',
    );
  });

  it('npm run build without the dev dependencies says to install them', async () => {
    const run = await ensureBuilt({ NODE_ENV: 'production' }, ['--force']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('building needs the dev dependencies (prisma, graphql-codegen, tsc not in node_modules/.bin): run `npm ci` first');
  });
});
