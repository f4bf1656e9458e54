#!/usr/bin/env node
// The Dockerfile's steps, for .ci/run on a machine without Docker: CI runs the very commands
// of the image's build rather than a copy of them that could drift.
//   node .ci/dockerfile.js build-steps        the build stage's RUN commands, one a line
//   node .ci/dockerfile.js assemble FROM TO   the runtime stage's COPY --from=build lines,
//                                             from the build stage's folder FROM (its /app) to TO
//   node .ci/dockerfile.js healthcheck        runs the HEALTHCHECK command here; its exit code
// Only what this Dockerfile uses is understood (one-line RUN in shell form, COPY --from=build
// with absolute /app sources, HEALTHCHECK … CMD in exec form): anything else is an error,
// never a silent skip.
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const WORKDIR = '/app';
const file = path.join(__dirname, '..', 'Dockerfile');

/** Instructions with their continuation lines joined, comments dropped: [{ stage, keyword, args }] */
function instructions() {
  const out = [];
  let stage = -1;
  let pending = '';
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!pending && /^\s*(#|$)/.test(raw)) continue;
    const line = pending + raw.trim();
    if (line.endsWith('\\')) {
      pending = line.slice(0, -1) + ' ';
      continue;
    }
    pending = '';
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(line) ?? die(`cannot read the Dockerfile line: ${line}`);
    if (keyword.toUpperCase() === 'FROM') stage++;
    out.push({ stage, keyword: keyword.toUpperCase(), args });
  }
  return out;
}

function die(message) {
  console.error(`.ci/dockerfile.js: ${message}`);
  process.exit(2);
}

const [command, ...rest] = process.argv.slice(2);
const all = instructions();
const lastStage = Math.max(...all.map((i) => i.stage));

if (command === 'build-steps') {
  for (const { stage, keyword, args } of all) {
    if (stage !== 0 || keyword !== 'RUN') continue;
    if (args.startsWith('[') || args.startsWith('--')) die(`RUN in a form this script does not run: ${args}`);
    console.log(args);
  }
} else if (command === 'assemble') {
  const [from, to] = rest;
  if (!from || !to) die('usage: assemble FROM TO');
  for (const { stage, keyword, args } of all) {
    if (stage !== lastStage || keyword !== 'COPY') continue;
    const words = args.split(/\s+/);
    if (words[0] !== '--from=build') die(`runtime COPY not from the build stage: ${args}`);
    const paths = words.filter((w) => !w.startsWith('--'));
    const dest = paths.pop();
    for (const source of paths) {
      if (!source.startsWith(`${WORKDIR}/`)) die(`COPY source outside ${WORKDIR}: ${source}`);
      const target = dest.endsWith('/') ? path.join(to, dest, path.basename(source)) : path.join(to, dest);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // cp -a: modes and modification times kept, as COPY keeps them
      execFileSync('cp', ['-a', path.join(from, source.slice(WORKDIR.length + 1)), target]);
    }
  }
} else if (command === 'healthcheck') {
  const check = all.find((i) => i.stage === lastStage && i.keyword === 'HEALTHCHECK');
  const exec = check && /\bCMD\s+(\[.*\])\s*$/.exec(check.args);
  if (!exec) die('no HEALTHCHECK … CMD [exec form] in the runtime stage');
  const [program, ...args] = JSON.parse(exec[1]);
  process.exit(spawnSync(program, args, { stdio: 'inherit' }).status ?? 1);
} else {
  die(`unknown command ${command ?? '(none)'}: build-steps, assemble FROM TO or healthcheck`);
}
