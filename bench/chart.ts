// ratios.svg: one row per judged ratio, with one bar per load (connection count)
// and the target as a black tick across them. Green when the target holds at that
// load, red when not; grey in smoke mode (nothing judged). The first load's bar
// is solid, the next ones lighter, each labelled with its connection count. Scenarios 9 and 10
// have a row against the peer (a stock oidc-provider) with its target, 1.00, as the tick.
import type { BenchReport } from './report';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function ratiosChart(report: BenchReport): string {
  const loads = report.meta.connections;
  // one row per (scenario, ratio); statement counts are not ratios
  const rows = report.scenarios.flatMap((s) => {
    const labels = [...new Set(s.loads.flatMap((l) => (l.metrics ?? []).filter((m) => m.label !== 'SQL/request').map((m) => m.label)))];
    return labels.map((label) => ({
      s,
      label,
      bars: loads.map((c) => ({ c, l: s.loads.find((l) => l.connections === c), m: s.loads.find((l) => l.connections === c)?.metrics?.find((m) => m.label === label) })),
    }));
  });
  const width = 800;
  const left = 300;
  const right = 110;
  const barH = 13;
  const rowH = loads.length * (barH + 3) + 14;
  const peer = rows.some((r) => r.label === '× peer');
  const top = peer ? 78 : 62;
  const height = top + rows.length * rowH + 40;
  const values = rows.flatMap((r) => r.bars.flatMap((b) => (b.m ? [Number.isFinite(b.m.value) ? b.m.value : 0, b.m.bar] : [])));
  const max = Math.max(1.3, ...values) * 1.05;
  const x = (v: number) => left + (Math.max(0, v) / max) * (width - left - right);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="13">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="16" y="24" font-size="16" font-weight="600">Benchmark ratios against their targets (${esc(report.meta.mode)}, ${report.meta.tokens.toLocaleString('en')} tokens)</text>`);
  out.push(`<text x="16" y="42" fill="#555">one bar per load (${loads.join(' / ')} connections, top to bottom); black tick = target, met only if met at each load</text>`);
  out.push(`<text x="16" y="57" fill="#555">ratios are req/s unless noted; medians of ${report.meta.rounds} round(s); ${esc(report.meta.date.slice(0, 16).replace('T', ' '))} UTC</text>`);
  if (peer) {
    const version = report.meta.peer ? ` ${report.meta.peer.version}` : '';
    out.push(`<text x="16" y="72" fill="#555">× peer: ours over a stock oidc-provider${esc(version)} at the same request, same round and load (1.00 = as fast as the peer)</text>`);
  }
  const step = max > 2.6 ? 0.5 : 0.25;
  for (let v = 0; v <= max; v += step) {
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 2}" x2="${x(v).toFixed(1)}" y2="${top + rows.length * rowH}" stroke="#eee"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${top + rows.length * rowH + 16}" text-anchor="middle" fill="#777" font-size="11">${v.toFixed(2)}</text>`);
  }
  rows.forEach((row, i) => {
    const y = top + i * rowH;
    if (i > 0) out.push(`<line x1="16" y1="${y}" x2="${width - 16}" y2="${y}" stroke="#f3f3f3"/>`);
    const judgedAll = report.meta.judged && row.s.met !== undefined;
    const lower = row.bars.find((b) => b.m)?.m?.higherIsBetter === false;
    const label = row.label === '× peer' ? '× peer (oidc-provider)' : row.label;
    out.push(`<text x="${left - 40}" y="${y + rowH / 2 + (lower ? -2 : 4)}" text-anchor="end"${judgedAll && !row.s.met ? ' fill="#b42318"' : ''}>${esc(`${row.s.id}: ${label}`)}</text>`);
    if (lower) out.push(`<text x="${left - 40}" y="${y + rowH / 2 + 12}" text-anchor="end" fill="#777" font-size="11">lower is better</text>`);
    let bar = NaN;
    row.bars.forEach((b, j) => {
      const by = y + 7 + j * (barH + 3);
      out.push(`<text x="${left - 6}" y="${by + barH - 2}" text-anchor="end" fill="#777" font-size="10">${b.c} c</text>`);
      if (!b.m) return;
      bar = b.m.bar;
      const color = !report.meta.judged ? '#9aa5b1' : b.l?.met ? '#2e9d57' : '#d64545';
      if (Number.isFinite(b.m.value)) {
        out.push(`<rect x="${left}" y="${by}" width="${(x(b.m.value) - left).toFixed(1)}" height="${barH}" fill="${color}" fill-opacity="${j === 0 ? 1 : 0.6}" rx="2"/>`);
      }
      const text = Number.isFinite(b.m.value) ? b.m.value.toFixed(2) : 'n/a';
      out.push(`<text x="${(Math.max(x(b.m.value || 0), x(b.m.bar)) + 6).toFixed(1)}" y="${by + barH - 2}" fill="#333" font-size="12">${esc(text)}</text>`);
    });
    if (Number.isFinite(bar)) {
      out.push(`<line x1="${x(bar).toFixed(1)}" y1="${y + 3}" x2="${x(bar).toFixed(1)}" y2="${y + rowH - 3}" stroke="#000" stroke-width="2"/>`);
      out.push(`<text x="${width - 12}" y="${y + rowH / 2 + 4}" text-anchor="end" fill="#555" font-size="11">${esc(`${lower ? '≤' : '≥'} ${bar.toFixed(2)}`)}</text>`);
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
