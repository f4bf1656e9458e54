// Job engines compared on one PostgreSQL: ours (src/jobs/engine.ts: jobs table, SKIP LOCKED, lease) vs pg-boss 12
// (bench/tuning-log.md, "Job engine"). Not part of npm run bench: pg-boss is not a dependency of the service.
// Rounds alternate; medians reported. Usage: node compare.mjs <postgres base url> <rounds>
import { createRequire } from 'node:module';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
const require = createRequire(new URL('../../../package.json', import.meta.url));
require('reflect-metadata');
const { createDb } = require('./dist/src/db/create-db.js');
const { migrate } = require('./dist/src/db/migrate.js');
const { TenantSql } = require('./dist/src/db/tenant-sql.js');
const { repositories } = require('./dist/src/domain/repositories.js');
const { JobEngine } = require('./dist/src/jobs/engine.js');

const BASE = process.argv[2] ?? 'postgresql://postgres@127.0.0.1:55432/postgres';
const ROUNDS = Number(process.argv[3] ?? 3);
const N = 2000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let dbn = 0;
async function freshDb() {
  const name = `jobbench_${process.pid}_${++dbn}`;
  const admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return BASE.replace(/\/[^/]*$/, `/${name}`);
}
async function until(check, ms = 60000) {
  const end = Date.now() + ms;
  while (!check()) { if (Date.now() > end) throw new Error('timeout'); await sleep(2); }
}

// ---------------------------------------------------------------- ours
async function ours() {
  const url = await freshDb();
  const dbs = [await createDb({ databaseUrl: url, poolSize: 10 }), await createDb({ databaseUrl: url, poolSize: 10 })];
  await migrate(dbs[0]);
  const repo = (db) => repositories(new TenantSql(db.sql)).jobs;
  const [{ id: account }] = await dbs[0].sql("INSERT INTO accounts (name) VALUES ('bench') RETURNING id");
  const seen = new Map();
  let started = 0;
  let lastAt = 0;
  const engines = dbs.map((db) => new JobEngine(db, repo(db), { pollSeconds: 1, concurrency: 10 }).handle('work', { run: async (job) => { seen.set(job.payload.n, (seen.get(job.payload.n) ?? 0) + 1); lastAt = Date.now(); } }).handle('timer', { run: async () => { started = Date.now(); } }));
  // write latency: a row + its job in one transaction, vs the row alone
  const write = async (withJob) => {
    const t = process.hrtime.bigint();
    await dbs[0].transaction(async (sql) => {
      await sql('INSERT INTO groups (account_id, name) VALUES ($1, $2)', [account, 'g']);
      if (withJob) await repositories(new TenantSql(sql)).jobs.enqueue({ accountId: BigInt(account) }, { kind: 'noop' });
    });
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const w0 = [], w1 = [];
  for (let i = 0; i < 200; i++) { w0.push(await write(false)); w1.push(await write(true)); }
  await dbs[0].sql("DELETE FROM jobs");
  // enqueue N (in 20 transactions), then drain with two engines
  for (let b = 0; b < 20; b++) await dbs[0].transaction(async (sql) => { const r = repositories(new TenantSql(sql)).jobs; for (let i = 0; i < N / 20; i++) await r.enqueue({ accountId: BigInt(account) }, { kind: 'work', payload: { n: b * 1000 + i } }); });
  const t0 = Date.now();
  for (const e of engines) await e.start();
  await until(() => seen.size === N);
  const drain = N / ((lastAt - t0) / 1000);
  const dups = [...seen.values()].filter((c) => c > 1).length;
  // one job's latency, idle engines (NOTIFY)
  const lat = [];
  for (let i = 0; i < 20; i++) { const before = seen.size; const t = Date.now(); await repo(dbs[0]).enqueue({ accountId: BigInt(account) }, { kind: 'work', payload: { n: 1e6 + i } }); await until(() => seen.size > before); lat.push(lastAt - t); await sleep(20); }
  // a 2 s timer
  const t2 = Date.now();
  await repo(dbs[0]).enqueue({ accountId: BigInt(account) }, { kind: 'timer', delaySeconds: 2 });
  await until(() => started > 0, 10000);
  const timer = started - t2 - 2000;
  for (const e of engines) await e.stop();
  for (const db of dbs) await db.close();
  return { writeMsWithout: median(w0), writeMsWith: median(w1), drainPerSec: drain, duplicates: dups, latencyMs: median(lat), timerLateMs: timer };
}

// ---------------------------------------------------------------- pg-boss
async function boss() {
  const url = await freshDb();
  const opts = { connectionString: url, max: 10, useListenNotify: true, supervise: true, schedule: false };
  const bosses = [new PgBoss(opts), new PgBoss(opts)];
  bosses.forEach((b) => b.on('error', () => {}));
  await bosses[0].start();
  await bosses[1].start();
  await bosses[0].createQueue('work', { notify: true });
  await bosses[0].createQueue('timer', { notify: true });
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query('CREATE TABLE groups (id bigserial primary key, account_id bigint, name text)');
  const write = async (withJob) => {
    const t = process.hrtime.bigint();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO groups (account_id, name) VALUES ($1, $2)', [1, 'g']);
      if (withJob) await bosses[0].send('work', { noop: true }, { db: { executeSql: (text, values) => client.query(text, values) } });
      await client.query('COMMIT');
    } finally { client.release(); }
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const w0 = [], w1 = [];
  for (let i = 0; i < 200; i++) { w0.push(await write(false)); w1.push(await write(true)); }
  await bosses[0].deleteAllJobs?.('work').catch?.(() => {});
  const seen = new Map();
  let lastAt = 0;
  let started = 0;
  for (let b = 0; b < 20; b++) await bosses[0].insert('work', Array.from({ length: N / 20 }, (_, i) => ({ data: { n: b * 1000 + i } })));
  const t0 = Date.now();
  const workOpts = { batchSize: 10, burstWhenBatchFull: true, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1 };
  for (const b of bosses) {
    for (let k = 0; k < 1; k++) await b.work('work', workOpts, async (jobs) => { for (const job of jobs) { if (job.data.noop) continue; seen.set(job.data.n, (seen.get(job.data.n) ?? 0) + 1); lastAt = Date.now(); } });
    await b.work('timer', { pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1 }, async () => { started = Date.now(); });
  }
  await until(() => seen.size === N);
  const drain = N / ((lastAt - t0) / 1000);
  const dups = [...seen.values()].filter((c) => c > 1).length;
  const lat = [];
  for (let i = 0; i < 20; i++) { const before = seen.size; const t = Date.now(); await bosses[0].send('work', { n: 1e6 + i }); await until(() => seen.size > before); lat.push(lastAt - t); await sleep(20); }
  const t2 = Date.now();
  await bosses[0].send('timer', {}, { startAfter: 2 });
  await until(() => started > 0, 10000);
  const timer = started - t2 - 2000;
  for (const b of bosses) await b.stop({ graceful: false, wait: true }).catch(() => {});
  await pool.end();
  return { writeMsWithout: median(w0), writeMsWith: median(w1), drainPerSec: drain, duplicates: dups, latencyMs: median(lat), timerLateMs: timer };
}

const results = { ours: [], pgboss: [] };
for (let r = 0; r < ROUNDS; r++) {
  results.ours.push(await ours());
  results.pgboss.push(await boss());
  console.error(`round ${r + 1}`, JSON.stringify({ ours: results.ours.at(-1), pgboss: results.pgboss.at(-1) }));
}
const summary = (rs) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, Math.round(median(rs.map((x) => x[k])) * 100) / 100]));
console.log(JSON.stringify({ ours: summary(results.ours), pgboss: summary(results.pgboss) }, null, 1));
process.exit(0);
