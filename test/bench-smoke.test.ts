import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pgbouncerBinary } from '../bench/pgbouncer';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { ensureBuilt, ROOT, tempDir } from './helpers/processes';
import { describeIf } from './helpers/skip';

// Issue 6: `npm run bench -- --smoke` proves the benchmark harness works end to end
// (database, seed, service, references, autocannon, report) on tiny data. It
// judges no number: CI machines are too noisy for that.

// Two loads (10 and 50 connections) measure every scenario and reference twice (the peer,
// a stock oidc-provider, included); then the events, the callback lifecycle, retention and
// scaling (about 35 s; when pgbouncer is there), each on a database of its own, and ours on
// the embedded PGlite against the peer.
jest.setTimeout(500_000);

const SCENARIOS = ['1', '2', '3', '4a', '4b', '5', '6', '7', '9', '10', '11', '8'];
const LOADS = [10, 50];
const REFERENCES = ['floor', 'ceiling', 'list-floor', 'list-floor-deep', 'peer-cc', 'peer-introspect'];
/** the scenarios judged against the peer (issue 26) */
const AGAINST_PEER = ['9', '10'];

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
        { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, BENCH_DATABASE_URL: db.url }, timeout: 480_000, maxBuffer: 16 * 2 ** 20 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  });
  afterAll(async () => {
    await drop?.();
    out?.remove();
  });

  it('exits 0 after running every scenario and every reference at both loads', () => {
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(run.stdout).toMatch(/expected duration ≈ \d/);
    for (const c of LOADS) {
      for (const key of [...REFERENCES, ...SCENARIOS]) expect(run.stdout).toMatch(new RegExp(`round 1 +${c} conn ${key}\\s+\\d+ req/s`));
    }
  });

  it('writes latest.json with req/s, latencies, ratios and SQL statements per request for every scenario', () => {
    const report = JSON.parse(readFileSync(path.join(out.path, 'latest.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', judged: false, tokens: 200, pipelining: 1, connections: LOADS });
    expect(report.scenarios.map((s: { id: string }) => s.id)).toEqual(SCENARIOS);
    for (const s of report.scenarios) {
      expect(s.loads.map((l: { connections: number }) => l.connections)).toEqual(LOADS);
      for (const l of s.loads) {
        const at = { id: s.id, connections: l.connections };
        // every request of the smoke run succeeded: the harness's requests are valid ones
        expect({ ...at, non2xx: l.non2xx, errors: l.errors }).toEqual({ ...at, non2xx: 0, errors: 0 });
        const fields = ['rps', 'p50', 'p99', 'vsFloor', 'vsCeiling', 'sqlPerRequest', ...(['4a', '4b', '5'].includes(s.id) ? ['vsListFloor'] : []), ...(AGAINST_PEER.includes(s.id) ? ['vsPeer'] : [])];
        for (const field of fields) expect({ ...at, field, ok: Number.isFinite(l[field]) && l[field] > 0 }).toEqual({ ...at, field, ok: true });
        // each target's figures are there (judged as nothing in smoke mode)
        expect({ ...at, metrics: l.metrics?.length > 0 && l.metrics.every((m: { value: number }) => Number.isFinite(m.value)) }).toEqual({ ...at, metrics: true });
      }
    }
    for (const key of REFERENCES) {
      for (const c of LOADS) {
        const ref = report.references.find((r: { key: string; connections: number }) => r.key === key && r.connections === c);
        expect({ key, c, rps: ref?.rps > 0 }).toEqual({ key, c, rps: true });
      }
    }
    const s8 = report.scenarios.find((s: { id: string }) => s.id === '8');
    for (const l of s8.loads) expect(l.basicP50).toBeGreaterThan(0);
    // how the peer was run, for anyone to repeat it
    expect(report.meta.peer).toEqual({ name: 'oidc-provider', version: expect.stringMatching(/^9\./), node: process.version, ttlSeconds: 7200 });
  });

  it('writes latest.md with the targets at both loads, a row of numbers per scenario and load, the list floor, and the ratios chart', () => {
    const md = readFileSync(path.join(out.path, 'latest.md'), 'utf8');
    const tables = md.split(/^## Measurements at (\d+) connections$/m);
    expect(tables.filter((_, i) => i % 2 === 1).map(Number)).toEqual(LOADS);
    for (const table of tables.filter((_, i) => i % 2 === 0).slice(1)) {
      for (const id of SCENARIOS) {
        // req/s, p50, p99, × floor, × list floor (list scenarios only), × peer (9 and 10 only), × ceiling, SQL/req
        const listFloor = ['4a', '4b', '5'].includes(id) ? '[\\d.]+' : '–';
        const peer = AGAINST_PEER.includes(id) ? '[\\d.]+' : '–';
        expect(table).toMatch(new RegExp(`^\\| ${id} \\| [^|]+ \\| [\\d,]+ \\| [\\d.]+ \\| [\\d.]+ \\| [\\d.]+ \\| ${listFloor} \\| ${peer} \\| [\\d.]+ \\| [\\d.]+ \\|`, 'm'));
      }
    }
    expect(md).toMatch(/^\| # \| scenario \| target \| 10 connections \| 50 connections \| met\? \|$/m);
    expect(md).toMatch(/^\| 5 \| [^|]+ \| ≥ 0\.50 × list floor; ≤ 4 SQL\/request \| [\d.]+ × list floor, [\d.]+ SQL\/request \| [\d.]+ × list floor, [\d.]+ SQL\/request \|/m);
    expect(md).toMatch(/^\| list floor: [^|]+ \| 50 \| [\d,]+ \|/m);
    expect(md).toMatch(/^\| 10 \| [^|]+ \| ≥ 0\.60 × floor; ≥ 1\.0 × peer \| [\d.]+ × floor, [\d.]+ × peer \| [\d.]+ × floor, [\d.]+ × peer \|/m);
    for (const key of ['POST /token` client_credentials', 'POST /token/introspection` of a hundred']) {
      for (const c of LOADS) expect(md).toMatch(new RegExp(`^\\| peer: oidc-provider, \`${key}[^|]+ \\| ${c} \\| [\\d,]+ \\|`, 'm'));
    }
    expect(md).toMatch(/^- \*\*peer\*\* \(issue 26\): a \*\*stock `oidc-provider` 9\.[\d.]+\*\*.*default in-memory adapter.*client_secret_basic.*`ttl\.ClientCredentials` 7200 s.*\*\*Stock: no tuning\.\*\*/m);
    expect(md).toMatch(/```sql\nWITH viewer AS/);
    expect(md).toMatch(/10 and 50 connections \(each measurement at each\), pipelining 1/);
    expect(existsSync(path.join(out.path, 'ratios.svg'))).toBe(true);
    expect(readFileSync(path.join(out.path, 'ratios.svg'), 'utf8')).toMatch(/^<svg[\s\S]*<rect[\s\S]*<\/svg>\s*$/);
    // the chart has the peer rows of 9 and 10
    for (const id of AGAINST_PEER) expect(readFileSync(path.join(out.path, 'ratios.svg'), 'utf8')).toContain(`>${id}: × peer (oidc-provider)</text>`);
  });

  it('then measures events (bench/events.ts): write cost, deliveries drained by a worker process, subscription fan-out; events.{json,md}', () => {
    expect(run.stdout).toMatch(/write cost: 50 client updates with their event and 50 without/);
    const report = JSON.parse(readFileSync(path.join(out.path, 'events.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', judged: false });
    expect(report.write).toMatchObject({ iterations: 50 });
    for (const ms of [report.write.withMs, report.write.withoutMs]) expect(ms).toBeGreaterThan(0);
    // every event delivered once, signed; every subscriber heard the change
    expect(report.deliveries).toMatchObject({ events: 100, liveEvents: 100, repeats: 0, unsigned: 0 });
    expect(report.deliveries.perSecond).toBeGreaterThan(0);
    expect(report.fanOut).toMatchObject({ subscribers: 20, rounds: 1 });
    expect(report.fanOut.lastMs).toBeGreaterThan(0);
    const md = readFileSync(path.join(out.path, 'events.md'), 'utf8');
    expect(md).toMatch(/^\| events delivered per second to a local receiver \(100 committed, one worker process drains them\) \| \*\*\d+\/s\*\*/m);
    expect(md).toMatch(/not judged \(smoke\)/);
  });

  it('then measures the callback lifecycle (bench/voice.ts): offer latency on each path, the queue read against the list floor, dispatch; voice.{json,md}', () => {
    expect(run.stdout).toMatch(/offer latency: 5 offers/);
    const report = JSON.parse(readFileSync(path.join(out.path, 'voice.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', judged: false });
    // every offer reached both subscriptions and the webhook
    expect(report.latency.offers).toBe(5);
    for (const p of ['put', 'accountEvents', 'callbackRequestUpdated', 'webhook']) expect({ p, ms: report.latency[p].p50 > 0 }).toEqual({ p, ms: true });
    // the page read is 100 queued requests; every request of the load succeeded, at each load
    expect(report.queueRead).toMatchObject({ queued: 150, rows: 100, rounds: 1 });
    expect(report.queueRead.loads.map((l: { connections: number }) => l.connections)).toEqual(LOADS);
    for (const l of report.queueRead.loads) {
      expect({ c: l.connections, non2xx: l.non2xx, errors: l.errors }).toEqual({ c: l.connections, non2xx: 0, errors: 0 });
      for (const field of ['rps', 'listFloorRps', 'vsListFloor', 'sqlPerRequest']) expect({ field, ok: l[field] > 0 }).toEqual({ field, ok: true });
    }
    // each of the 50 queued requests was offered once (events and history rows agree) and completed; none failed
    expect(report.dispatch.runs).toEqual([expect.objectContaining({ offered: 50, historyOffered: 50, completed: 50, failed: 0, reoffered: 0 })]);
    expect(report.dispatch.offersPerSecond).toBeGreaterThan(0);
    const md = readFileSync(path.join(out.path, 'voice.md'), 'utf8');
    expect(md).toMatch(/^\| graphql-ws `accountEvents` \(the event envelope\) \| \*\*[\d.]+ ms\*\* \(p95 [\d.]+, max [\d.]+\) \| ≤ 50 ms median \| not judged \(smoke\) \|$/m);
    expect(md).toMatch(/^\| 50 \| [\d]+ \| [\d.]+ \| [\d.]+ \| [\d]+ \([\d.]+\) \| \*\*[\d.]+\*\* \| [\d.]+ \| ≥ 0\.60 × list floor \| not judged \(smoke\) \|$/m);
    expect(md).toMatch(/^\| 1 \| 50 \/ 50 \| [\d.]+ \| \d+ \| \d+ \| 50 \(\d+\/s\) \| 0 \| 0 \|$/m);
  });

  it('then measures retention (bench/retention.ts): the purge of a backlog under Bearer load, sizes, and a soak; retention.{json,md}', () => {
    const report = JSON.parse(readFileSync(path.join(out.path, 'retention.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', judged: false });
    // the purge (npm run cli -- purge) removed exactly the expired rows and kept every live one
    expect(report.scale.expired).toEqual({ tokens: 7000, codes: 3000, grants: 1000 });
    expect(report.scale.purge.removed).toMatchObject({ oauth_tokens: 7000, oauth_authorization_codes: 3000, oauth_grants: 1000 });
    expect(report.scale.kept).toMatchObject({ tokens: 1000, grants: 100, codes: 0, refreshed: true });
    expect(report.scale.kept.authenticated).toBe(report.scale.kept.probed);
    expect(report.scale.during.windows).toBeGreaterThan(0);
    for (const w of report.scale.windows) expect({ phase: w.phase, non2xx: w.non2xx, errors: w.errors }).toEqual({ phase: w.phase, non2xx: 0, errors: 0 });
    // the soak issued and revoked through every path, and sampled every table
    expect(Object.keys(report.soak.operations)).toEqual(expect.arrayContaining(['client_credentials issued', 'code exchanged', 'refreshed', 'family revoked']));
    expect(report.soak.failures).toEqual({});
    expect(report.soak.tables.map((t: { table: string }) => t.table)).toEqual(expect.arrayContaining(['oauth_tokens', 'audit_logs', 'events', 'retention_runs']));
    const md = readFileSync(path.join(out.path, 'retention.md'), 'utf8');
    expect(md).toMatch(/^Throughput during the purge: \*\*[\d.]+ ×\*\* without it \(target ≥ 0\.80 × without the purge\): not judged \(smoke\)\.$/m);
    expect(md).toMatch(/^\| oauth_tokens \| [\d,]+ \| [\d,]+ \| [\d,.]+ \| [\d,.]+ \| (flat|\*\*grows\*\*) \|$/m);
  });
  describeIf(pgbouncerBinary() !== undefined, 'needs-pgbouncer', 'no pgbouncer found (apt-get install pgbouncer): npm run bench skips its scaling part')('scaling', () => {
    it('then measures scaling (bench/scaling.ts): pooled against direct, one web process against two, CPU per request; scaling.{json,md}', () => {
      const report = JSON.parse(readFileSync(path.join(out.path, 'scaling.json'), 'utf8'));
      expect(report.meta).toMatchObject({ mode: 'smoke', judged: false, webConcurrency: 1, pgbouncerSettings: { pool_mode: 'transaction' } });
      const rows = ['bearer', 'create', 'processes', 'bearer-unnamed', 'create-unnamed'];
      expect(report.rows.map((r: { row: string }) => r.row)).toEqual(rows);
      // every request through the pooler, direct and on two processes answered 2xx: the service works behind pgbouncer
      for (const m of report.measurements) {
        const at = { row: m.row, variant: m.variant, connections: m.connections };
        expect({ ...at, ok: m.ok > 0, non2xx: m.non2xx, errors: m.errors }).toEqual({ ...at, ok: true, non2xx: 0, errors: 0 });
      }
      for (const r of report.rows) {
        expect({ row: r.row, loads: r.loads.map((l: { connections: number }) => l.connections) }).toEqual({ row: r.row, loads: ['bearer', 'create'].includes(r.row) ? LOADS : [50] });
        for (const l of r.loads) expect({ row: r.row, c: l.connections, ratio: l.ratio > 0, cpu: l.a.cpuMs.web > 0 && l.b.cpuMs.web > 0 }).toEqual({ row: r.row, c: l.connections, ratio: true, cpu: true });
      }
      // the pooled measurements went through pgbouncer (its CPU moved), the direct ones did not need it
      const pooled = report.rows.find((r: { row: string }) => r.row === 'bearer').loads[1].b;
      expect(pooled.cpuMs.pgbouncer).toBeGreaterThan(0);
      expect(report.capacity.map((c: { via: string }) => c.via)).toEqual(['pgbouncer', 'direct', 'pgbouncer', 'direct']);
      for (const c of report.capacity) expect({ via: c.via, perWebCore: c.perWebCore > 0 }).toEqual({ via: c.via, perWebCore: true });
      const md = readFileSync(path.join(out.path, 'scaling.md'), 'utf8');
      expect(md).toMatch(/^\| Bearer: GET \/api\/v2\/oauth\/tokens\/current\.json \(scenario 1\) \| 50 \| direct \| [\d,]+ \| [\d.]+ \/ [\d.]+ \| pooled \| [\d,]+ \| [\d.]+ \/ [\d.]+ \| \*\*[\d.]+\*\* \| [\d., ]+ \| pooled ≥ 0\.90 × direct \| not judged \(smoke\) \|$/m);
      expect(md).toMatch(/^## Capacity \(derived, for docs\/scaling\.md\)$/m);
      expect(md).toMatch(/^Two web processes \(through pgbouncer\) carried \*\*[\d.]+ ×\*\* what one did/m);
    });
  });

  it('then measures ours on the embedded PGlite against the peer (bench/peer-pglite.ts): pglite-peer.{json,md} and its section of latest.md', () => {
    expect(run.stdout).toMatch(/pglite: a confidential client and 100 tokens through the API; both servers issue and introspect \(active\)/);
    const report = JSON.parse(readFileSync(path.join(out.path, 'pglite-peer.json'), 'utf8'));
    expect(report.meta).toMatchObject({ mode: 'smoke', rounds: 1, connections: LOADS, peer: { name: 'oidc-provider' } });
    expect(report.rows.map((r: { scenario: string }) => r.scenario)).toEqual(AGAINST_PEER);
    for (const r of report.rows) {
      expect(r.loads.map((l: { connections: number }) => l.connections)).toEqual(LOADS);
      for (const l of r.loads) {
        const at = { scenario: r.scenario, connections: l.connections };
        // every request to ours and to the peer succeeded, and each figure is there
        expect({ ...at, non2xx: l.non2xx, errors: l.errors }).toEqual({ ...at, non2xx: 0, errors: 0 });
        for (const field of ['rps', 'p50', 'p99', 'peerRps', 'peerP50', 'peerP99', 'vsPeer']) expect({ ...at, field, ok: l[field] > 0 }).toEqual({ ...at, field, ok: true });
      }
    }
    const row = /^\| (9|10) \| [^|]+ \| (10|50) \| [\d,]+ \| [\d.]+ \/ [\d.]+ \| [\d,]+ \| [\d.]+ \/ [\d.]+ \| \*\*[\d.]+\*\* \|$/gm;
    expect(readFileSync(path.join(out.path, 'pglite-peer.md'), 'utf8').match(row)).toHaveLength(4);
    const latest = readFileSync(path.join(out.path, 'latest.md'), 'utf8');
    const section = latest.slice(latest.indexOf('<!-- pglite-peer:start -->'), latest.indexOf('<!-- pglite-peer:end -->'));
    expect(section).toMatch(/\[pglite-peer\.md\]\(pglite-peer\.md\)/);
    expect(section.match(row)).toHaveLength(4);
  });
});
