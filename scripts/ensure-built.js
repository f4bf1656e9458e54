#!/usr/bin/env node
// Builds what is missing or stale, so that `npm start`, `npm test` and the CLI
// work straight after `npm ci` on a fresh machine:
//   1. the Prisma client (src/generated/prisma) from prisma/schema.prisma
//   2. the typed GraphQL documents (src/generated/graphql.ts) from codegen.yml
//   3. (unless --generated-only) the JavaScript in dist/ from src/ and scripts/
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

function newest(paths) {
  let max = 0;
  const walk = (p) => {
    if (!fs.existsSync(p)) return;
    const st = fs.statSync(p);
    if (st.isDirectory()) {
      if (path.basename(p) === 'generated' || p === path.join(root, 'bench/results')) return;
      for (const e of fs.readdirSync(p)) walk(path.join(p, e));
    } else max = Math.max(max, st.mtimeMs);
  };
  paths.forEach((p) => walk(path.join(root, p)));
  return max;
}
const mtime = (p) => (fs.existsSync(path.join(root, p)) ? fs.statSync(path.join(root, p)).mtimeMs : 0);
const run = (cmd, args, env) => {
  try {
    execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
  } catch (err) {
    console.error(`build step failed: ${path.basename(cmd)} ${args.join(' ')} (exit ${err.status})`);
    process.exit(1);
  }
};
const force = process.argv.includes('--force');
const touch = (p) => {
  const now = new Date();
  if (fs.existsSync(path.join(root, p))) fs.utimesSync(path.join(root, p), now, now);
};

if (force || mtime('src/generated/prisma/client.ts') < mtime('prisma/schema.prisma')) {
  // prisma generate looks for the native schema-engine binary, which it does not need and an offline machine cannot download.
  run(bin('prisma'), ['generate'], { PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || '/bin/false', PRISMA_HIDE_UPDATE_MESSAGE: '1' });
  touch('src/generated/prisma/client.ts');
}
if (force || mtime('src/generated/graphql.ts') < newest(['schema.graphql', 'codegen.yml', 'src/rest/operations', 'test/operations'])) {
  run(bin('graphql-codegen'), ['--config', 'codegen.yml', '--silent']);
  // codegen leaves an unchanged file alone: mark it fresh, or every start would run it again
  touch('src/generated/graphql.ts');
}
if (!process.argv.includes('--generated-only')) {
  if (force || mtime('dist/.built') < newest(['src', 'scripts', 'bench', 'prisma/schema.prisma', 'tsconfig.json', 'tsconfig.build.json', 'package.json'])) {
    run(bin('tsc'), ['-p', 'tsconfig.build.json']);
    fs.writeFileSync(path.join(root, 'dist/.built'), new Date().toISOString());
  }
}
