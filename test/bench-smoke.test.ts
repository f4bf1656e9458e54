import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { ensureBuilt, ROOT, tempDir } from './helpers/processes';

// Issue 6: `npm run bench -- --smoke` proves the benchmark harness works end to end
// (database, seed, service, references, autocannon, report) on tiny data. It
// judges no number: CI machines are too noisy for that.

jest.setTimeout(150_000);

const SCENARIOS = ['1', '2', '3', '4a', '4b', '5', '6', '7', '9', '10', '11', '8'];

describeOnPostgres('npm run bench -- --smoke', () => {
  let out: ReturnType<typeof tempDir>;
  let drop: (() => Promise<void>) | undefined;
  let run: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    out = tempDir('bench-smoke-');
    await ensureBuilt();
    const db = await freshPostgresDatabase();
    drop = db.drop;
    run = await new Promise((resolve) => {
      execFile(
        process.execPath,
        [path.join(ROOT, 'dist/bench/run.js'), '--smoke', '--out', out.path],
        { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, BENCH_DATABASE_URL: db.url }, timeout: 140_000, maxBuffer: 16 * 2 ** 20 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  });
  afterAll(async () => {
    await drop?.();
    out?.remove();
  });

  it('exits 0 after running every scenario against the service and both references', () => {
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    for (const key of ['floor', 'ceiling', ...SCENARIOS]) expect(run.stdout).toMatch(new RegExp(`round 1 ${key}\\s+\\d+ req/s`));
  });

  it('writes latest.json with req/s, latencies, ratios and SQL statements per request for every scenario', () => {
    const report = JSON.parse(readFileSync(path.join(out.path, 'latest.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', judged: false, tokens: 200, pipelining: 1, connections: expect.any(Number) });
    expect(report.scenarios.map((s: { id: string }) => s.id)).toEqual(SCENARIOS);
    for (const s of report.scenarios) {
      // every request of the smoke run succeeded: the harness's requests are valid ones
      expect({ id: s.id, non2xx: s.non2xx, errors: s.errors }).toEqual({ id: s.id, non2xx: 0, errors: 0 });
      for (const field of ['rps', 'p50', 'p99', 'vsFloor', 'vsCeiling', 'sqlPerRequest']) {
        expect({ id: s.id, field, ok: Number.isFinite(s[field]) && s[field] > 0 }).toEqual({ id: s.id, field, ok: true });
      }
    }
    for (const ref of ['ceiling', 'floor']) expect(report.references[ref].rps).toBeGreaterThan(0);
    const s8 = report.scenarios.find((s: { id: string }) => s.id === '8');
    expect(s8.basicP50).toBeGreaterThan(0);
  });

  it('writes latest.md with a row of numbers per scenario, and the ratios chart', () => {
    const md = readFileSync(path.join(out.path, 'latest.md'), 'utf8');
    for (const id of SCENARIOS) expect(md).toMatch(new RegExp(`^\\| ${id} \\| [^|]+ \\| [\\d,]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\|`, 'm'));
    expect(md).toMatch(/connections, pipelining 1/);
    expect(existsSync(path.join(out.path, 'ratios.svg'))).toBe(true);
    expect(readFileSync(path.join(out.path, 'ratios.svg'), 'utf8')).toMatch(/^<svg[\s\S]*<rect[\s\S]*<\/svg>\s*$/);
  });
});
