#!/usr/bin/env node
// Builds what is missing or stale, so that `npm start`, `npm test` and the CLI
// work straight after `npm ci` on a fresh machine:
//   1. the Prisma client (src/generated/prisma) from prisma/schema.prisma
//   2. the typed GraphQL documents (src/generated/graphql.ts) from codegen.yml
//   3. (unless --generated-only) the JavaScript in dist/ from src/ and scripts/
// A production start builds nothing: with NODE_ENV=production, or without the build tools
// (dev dependencies pruned: `npm prune --omit=dev`), it only checks that dist/ was built
// from these sources by `npm run build` (--force, which needs the dev dependencies), and
// otherwise stops with a one-line error saying to run it.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

/** The most recently modified file under these paths: { mtimeMs, file } (0 and undefined when none). */
function newest(paths) {
  let max = { mtimeMs: 0, file: undefined };
  const walk = (p) => {
    if (!fs.existsSync(p)) return;
    const st = fs.statSync(p);
    if (st.isDirectory()) {
      if (path.basename(p) === 'generated' || p === path.join(root, 'bench/results')) return;
      for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    } else if (st.mtimeMs > max.mtimeMs) max = { mtimeMs: st.mtimeMs, file: path.relative(root, p) };
  };
  paths.forEach((p) => walk(path.join(root, p)));
  return max;
}
const mtime = (p) => (fs.existsSync(path.join(root, p)) ? fs.statSync(path.join(root, p)).mtimeMs : 0);
const fail = (message) => {
  console.error(message);
  process.exit(1);
};
const run = (cmd, args, env) => {
  try {
    execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
  } catch (err) {
    fail(`build step failed: ${path.basename(cmd)} ${args.join(' ')} (exit ${err.status})`);
  }
};
const force = process.argv.includes('--force');
const generatedOnly = process.argv.includes('--generated-only');
const touch = (p) => {
  const now = new Date();
  if (fs.existsSync(path.join(root, p))) fs.utimesSync(path.join(root, p), now, now);
};
// what dist/ is compiled from: a file newer than dist/.built makes it stale
const DIST_SOURCES = ['src', 'scripts', 'bench', 'prisma/schema.prisma', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
const missingTools = ['prisma', 'graphql-codegen', 'tsc'].filter((name) => !fs.existsSync(bin(name)));

if (!force && !generatedOnly && (process.env.NODE_ENV === 'production' || missingTools.length > 0)) {
  const why = process.env.NODE_ENV === 'production' ? 'NODE_ENV=production never builds at start' : 'the build tools (dev dependencies) are not installed';
  const built = mtime('dist/.built');
  const source = newest(DIST_SOURCES);
  if (built === 0) fail(`dist/ is not built, and ${why}: run \`npm run build\` first (it needs the dev dependencies: \`npm ci\`)`);
  if (built < source.mtimeMs) fail(`dist/ is older than ${source.file}, and ${why}: run \`npm run build\` again (it needs the dev dependencies: \`npm ci\`)`);
  process.exit(0);
}
if (missingTools.length > 0) fail(`building needs the dev dependencies (${missingTools.join(', ')} not in node_modules/.bin): run \`npm ci\` first`);

if (force || mtime('src/generated/prisma/client.ts') < mtime('prisma/schema.prisma')) {
  // prisma generate looks for the native schema-engine binary, which it does not need and an offline machine cannot download.
  run(bin('prisma'), ['generate'], { PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || '/bin/false', PRISMA_HIDE_UPDATE_MESSAGE: '1' });
  touch('src/generated/prisma/client.ts');
}
if (force || mtime('src/generated/graphql.ts') < newest(['schema.graphql', 'codegen.yml', 'src/rest/operations', 'test/operations']).mtimeMs) {
  run(bin('graphql-codegen'), ['--config', 'codegen.yml', '--silent']);
  // codegen leaves an unchanged file alone: mark it fresh, or every start would run it again
  touch('src/generated/graphql.ts');
}
if (!generatedOnly) {
  if (force || mtime('dist/.built') < newest(DIST_SOURCES).mtimeMs) {
    run(bin('tsc'), ['-p', 'tsconfig.build.json']);
    fs.writeFileSync(path.join(root, 'dist/.built'), new Date().toISOString());
  }
}
