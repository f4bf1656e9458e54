// ratios.svg: one horizontal bar per judged ratio, with its target as a tick.
// Green when the target holds, red when not; grey in smoke mode (nothing judged).
import type { BenchReport } from './report';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function ratiosChart(report: BenchReport): string {
  const rows = report.scenarios.filter((s) => s.metric && s.metric.label !== 'SQL/request');
  const width = 760;
  const left = 300;
  const right = 90;
  const rowH = 34;
  const top = 54;
  const height = top + rows.length * rowH + 40;
  const max = Math.max(1.3, ...rows.map((s) => (Number.isFinite(s.metric!.value) ? s.metric!.value : 0)), ...rows.map((s) => s.metric!.bar)) * 1.05;
  const x = (v: number) => left + (Math.max(0, v) / max) * (width - left - right);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="13">`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(`<text x="16" y="24" font-size="16" font-weight="600">Benchmark ratios against their targets (${esc(report.meta.mode)}, ${report.meta.tokens.toLocaleString('en')} tokens)</text>`);
  out.push(`<text x="16" y="42" fill="#555">bar = measured, black tick = target; ratios are req/s unless noted; ${esc(report.meta.date.slice(0, 16).replace('T', ' '))} UTC</text>`);
  for (let v = 0; v <= max; v += 0.25) {
    out.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 4}" x2="${x(v).toFixed(1)}" y2="${top + rows.length * rowH}" stroke="#eee"/>`);
    out.push(`<text x="${x(v).toFixed(1)}" y="${top + rows.length * rowH + 16}" text-anchor="middle" fill="#777" font-size="11">${v.toFixed(2)}</text>`);
  }
  rows.forEach((s, i) => {
    const m = s.metric!;
    const y = top + i * rowH;
    const color = !report.meta.judged ? '#9aa5b1' : s.met ? '#2e9d57' : '#d64545';
    const label = `${s.id}: ${m.label}${m.higherIsBetter ? '' : ' (lower is better)'}`;
    out.push(`<text x="${left - 8}" y="${y + 20}" text-anchor="end">${esc(label)}</text>`);
    if (Number.isFinite(m.value)) out.push(`<rect x="${left}" y="${y + 7}" width="${(x(m.value) - left).toFixed(1)}" height="18" fill="${color}" rx="2"/>`);
    out.push(`<line x1="${x(m.bar).toFixed(1)}" y1="${y + 2}" x2="${x(m.bar).toFixed(1)}" y2="${y + 30}" stroke="#000" stroke-width="2"/>`);
    const text = `${Number.isFinite(m.value) ? m.value.toFixed(2) : 'n/a'} (${m.higherIsBetter ? '≥' : '≤'} ${m.bar})`;
    out.push(`<text x="${(Math.max(x(m.value || 0), x(m.bar)) + 6).toFixed(1)}" y="${y + 20}" fill="#333">${esc(text)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
