// Reads a V8 .cpuprofile (node --cpu-prof, e.g. from `npm run bench -- --cpu-prof`)
// and writes, beside it:
//   <name>.flame.svg  a flame graph (icicle: callers on top, width = time)
//   <name>.top.md     self time by function and by package / source area
//   node dist/bench/profile.js <file.cpuprofile> [--min 0.3]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface Tree {
  name: string;
  area: string;
  self: number;
  total: number;
  children: Tree[];
}

/** Where a function lives: our source by folder, a dependency by package, or node/V8. */
export function areaOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(v8/native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node:internal';
  const m = /\/dist\/(src\/[^/]+(?:\/[^/]+)?)\//.exec(url);
  if (m) return m[1];
  return path.basename(url);
}

export function summarize(profile: CpuProfile): { root: Tree; totalMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const build = (node: ProfileNode): Tree => {
    const children = (node.children ?? []).map((c) => build(byId.get(c)!));
    const self = (selfUs.get(node.id) ?? 0) / 1000;
    const file = node.callFrame.url ? `${path.basename(node.callFrame.url)}:${node.callFrame.lineNumber + 1}` : '';
    return {
      name: `${node.callFrame.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`,
      area: areaOf(node.callFrame.url, node.callFrame.functionName),
      self,
      total: self + children.reduce((s, c) => s + c.total, 0),
      children,
    };
  };
  const root = build(profile.nodes[0]);
  return { root, totalMs: root.total };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function color(area: string): string {
  if (area.startsWith('src/')) return '#f4a261';
  if (area === '(idle)' || area === '(program)' || area === '(garbage collector)') return '#d9d9d9';
  if (area.startsWith('node:')) return '#8ecae6';
  let h = 0;
  for (const ch of area) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return `hsl(${h}, 55%, 72%)`;
}

export function flameSvg(root: Tree, title: string, minFraction = 0.002): string {
  // drop idle so the graph shows where busy time goes
  const busy = { ...root, children: root.children.filter((c) => c.name.split(' ')[0] !== '(idle)') };
  busy.total = busy.self + busy.children.reduce((s, c) => s + c.total, 0);
  const width = 1400;
  const rowH = 16;
  const rects: string[] = [];
  let maxDepth = 0;
  const walk = (t: Tree, x: number, depth: number) => {
    const w = (t.total / busy.total) * width;
    if (w < width * minFraction) return;
    maxDepth = Math.max(maxDepth, depth);
    const y = 30 + depth * rowH;
    const pct = ((t.total / busy.total) * 100).toFixed(1);
    const label = w > 40 ? esc(t.name).slice(0, Math.floor(w / 6.5)) : '';
    rects.push(
      `<g><title>${esc(t.name)} [${esc(t.area)}] ${t.total.toFixed(0)} ms (${pct}%), self ${t.self.toFixed(0)} ms</title>` +
        `<rect x="${x.toFixed(1)}" y="${y}" width="${Math.max(0.5, w - 0.5).toFixed(1)}" height="${rowH - 1}" fill="${color(t.area)}"/>` +
        (label ? `<text x="${(x + 3).toFixed(1)}" y="${y + 12}">${label}</text>` : '') +
        '</g>',
    );
    let cx = x;
    for (const c of [...t.children].sort((a, b) => b.total - a.total)) {
      walk(c, cx, depth + 1);
      cx += (c.total / busy.total) * width;
    }
  };
  walk(busy, 0, 0);
  const height = 30 + (maxDepth + 1) * rowH + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="monospace" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="4" y="18" font-size="14" font-family="sans-serif">${esc(title)} — busy time ${busy.total.toFixed(0)} ms (idle excluded); orange = our code (dist/src), blue = node internals</text>`,
    ...rects,
    '</svg>',
    '',
  ].join('\n');
}

export function topTable(root: Tree, limit = 30): string {
  const selfByFn = new Map<string, { ms: number; area: string }>();
  const selfByArea = new Map<string, number>();
  const walk = (t: Tree) => {
    const e = selfByFn.get(t.name) ?? { ms: 0, area: t.area };
    e.ms += t.self;
    selfByFn.set(t.name, e);
    selfByArea.set(t.area, (selfByArea.get(t.area) ?? 0) + t.self);
    t.children.forEach(walk);
  };
  walk(root);
  const idle = [...selfByFn].filter(([n]) => n.startsWith('(idle)')).reduce((s, [, v]) => s + v.ms, 0);
  const busy = root.total - idle;
  const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1)}%`;
  const lines = [`Busy ${busy.toFixed(0)} ms of ${root.total.toFixed(0)} ms sampled.`, '', '| self time by area | ms | % of busy |', '|---|---:|---:|'];
  for (const [area, ms] of [...selfByArea].filter(([a]) => a !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 20)) lines.push(`| ${area} | ${ms.toFixed(0)} | ${pct(ms)} |`);
  lines.push('', '| self time by function | area | ms | % of busy |', '|---|---|---:|---:|');
  for (const [fn, v] of [...selfByFn].filter(([n]) => !n.startsWith('(idle)')).sort((a, b) => b[1].ms - a[1].ms).slice(0, limit)) {
    lines.push(`| \`${fn.replace(/\|/g, '\\|')}\` | ${v.area} | ${v.ms.toFixed(0)} | ${pct(v.ms)} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** Inclusive time of every function whose name matches, as a share of busy time (for "what does X cost"). */
export function inclusiveShare(root: Tree, match: RegExp): number {
  let sum = 0;
  const walk = (t: Tree, inside: boolean) => {
    const hit = !inside && match.test(t.name);
    if (hit) sum += t.total;
    t.children.forEach((c) => walk(c, inside || hit));
  };
  walk(root, false);
  const idle = root.children.filter((c) => c.name.startsWith('(idle)')).reduce((s, c) => s + c.total, 0);
  return sum / (root.total - idle);
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node dist/bench/profile.js <file.cpuprofile> [--grep regexp]...');
    process.exit(2);
  }
  const { root } = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const base = file.replace(/\.cpuprofile$/, '');
  writeFileSync(`${base}.flame.svg`, flameSvg(root, path.basename(file)));
  let top = topTable(root);
  const greps = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--grep' ? [a] : []));
  if (greps.length) {
    top += '\n| inclusive time of | % of busy |\n|---|---:|\n';
    for (const g of greps) top += `| \`${g}\` | ${(inclusiveShare(root, new RegExp(g)) * 100).toFixed(1)}% |\n`;
  }
  writeFileSync(`${base}.top.md`, top);
  console.log(top);
  console.log(`wrote ${base}.flame.svg and ${base}.top.md`);
}
