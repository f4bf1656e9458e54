import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createJobEngine } from '../src/jobs/kinds';
import type { JobEngine } from '../src/jobs/engine';
import { createServices } from '../src/domain/services';
import { createTestApp, basicHeader, DEFAULT_LIMITS, TEST_HASH_KEY, type TestContext, type TestUser } from './helpers/test-app';

// docs/api.md, "Metrics": GET /metrics in Prometheus's text format, scraped over HTTP as
// Prometheus does, and read back with a strict parser of that format.

jest.setTimeout(60_000);

// ---- Prometheus text format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/) ----

interface Sample { name: string; labels: Record<string, string>; value: number }
interface Family { type: string; help: string; samples: Sample[] }

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/;
const SUFFIXES: Record<string, string[]> = { counter: [''], gauge: [''], untyped: [''], histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

function parseValue(raw: string): number {
  if (raw === 'NaN') return NaN;
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`not a sample value: ${raw}`);
  return Number(raw);
}

function parseLabels(raw: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = raw ?? '';
  while (rest.length > 0) {
    const m = LABEL.exec(rest);
    if (!m) throw new Error(`bad labels: {${raw}}`);
    if (m[1] in labels) throw new Error(`label ${m[1]} twice in {${raw}}`);
    labels[m[1]] = m[2].replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(m[0].length);
  }
  return labels;
}

/** Every line must be a HELP, a TYPE, or a sample of a family declared before it; anything else throws. */
function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sample: string) => {
    for (const [name, family] of families) if (SUFFIXES[family.type]?.some((suffix) => sample === name + suffix)) return family;
    return undefined;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, what, name, rest] = meta;
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`bad metric name: ${line}`);
      const family = families.get(name) ?? { type: 'untyped', help: '', samples: [] };
      if (what === 'TYPE') {
        if (!(rest in SUFFIXES)) throw new Error(`unknown type: ${line}`);
        family.type = rest;
      } else family.help = rest;
      families.set(name, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const family = familyOf(m[1]);
    if (!family) throw new Error(`a sample of no declared family: ${line}`);
    family.samples.push({ name: m[1], labels: parseLabels(m[2]), value: parseValue(m[3]) });
  }
  return families;
}

const labelsMatch = (sample: Sample, want: Record<string, string>) => Object.entries(want).every(([k, v]) => sample.labels[k] === v);

class Scrape {
  constructor(readonly text: string, readonly families: Map<string, Family>) {}
  family(name: string): Family {
    const family = this.families.get(name);
    if (!family) throw new Error(`no metric ${name} in the scrape`);
    return family;
  }
  /** the value of the one sample with these labels (sampleName: e.g. a histogram's _count); undefined when there is none */
  value(name: string, labels: Record<string, string> = {}, sampleName = name): number | undefined {
    const found = this.family(name).samples.filter((s) => s.name === sampleName && labelsMatch(s, labels));
    if (found.length > 1) throw new Error(`${found.length} samples of ${sampleName} match ${JSON.stringify(labels)}`);
    return found[0]?.value;
  }
}

// ---- the service ----

async function scrape(base: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  const text = await res.text();
  return new Scrape(text, parsePrometheusText(text));
}

const REQUESTS = 'http_requests_total';
const DURATION = 'http_request_duration_seconds';
const REFUSALS = 'rate_limit_refusals_total';

describe('GET /metrics (docs/api.md, "Metrics")', () => {
  let ctx: TestContext;
  let base: string;
  let admin: TestUser;

  beforeAll(async () => {
    // two failed logins per email before 429: the cheapest real rate limit
    ctx = await createTestApp({ limits: { loginFailures: 2 } });
    admin = await ctx.createUser(await ctx.createAccount(), 'admin');
    base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => ctx.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers });

  it('counts requests by method, route pattern and status, with latency buckets; never a raw URL, never itself', async () => {
    const before = await scrape(base);
    const route = { method: 'GET', route: '/api/v2/oauth/clients/:id' };
    const notFound = (s: Scrape) => s.value(REQUESTS, { ...route, status_code: '404' }) ?? 0;
    const ok = (s: Scrape) => s.value(REQUESTS, { method: 'GET', route: '/api/v2/oauth/clients.json', status_code: '200' }) ?? 0;
    expect((await get('/api/v2/oauth/clients/77.json', { authorization: admin.basic })).status).toBe(404);
    expect((await get('/api/v2/oauth/clients/78', { authorization: admin.basic })).status).toBe(404);
    expect((await get('/api/v2/oauth/clients.json', { authorization: admin.basic })).status).toBe(200);
    for (const path of ['/no/such/thing-1', '/no/such/thing-2?x=secret-query', '/.env']) expect((await get(path)).status).toBe(404);

    const after = await scrape(base);
    expect(notFound(after) - notFound(before)).toBe(2);
    expect(ok(after) - ok(before)).toBe(1);
    // every unmatched URL is one label value
    expect((after.value(REQUESTS, { method: 'GET', route: 'unmatched', status_code: '404' }) ?? 0) - (before.value(REQUESTS, { method: 'GET', route: 'unmatched', status_code: '404' }) ?? 0)).toBe(3);
    const labelValues = [...after.families.values()].flatMap((f) => f.samples.flatMap((s) => Object.values(s.labels)));
    for (const raw of ['77', '78', 'thing', 'secret-query', '.env']) expect(labelValues.filter((v) => v.includes(raw))).toEqual([]);
    // scrapes are not traffic: /metrics is in no request metric
    expect(labelValues).not.toContain('/metrics');

    // the histogram: cumulative buckets ending at +Inf, whose count is the counter's
    const duration = after.family(DURATION);
    expect(duration.type).toBe('histogram');
    const buckets = duration.samples.filter((s) => s.name === `${DURATION}_bucket` && labelsMatch(s, { ...route, status_code: '404' }));
    expect(buckets.map((b) => b.labels.le)).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf']);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
    expect(buckets[buckets.length - 1].value).toBe(notFound(after));
    expect(after.value(DURATION, { ...route, status_code: '404' }, `${DURATION}_count`)).toBe(notFound(after));
    expect(after.value(DURATION, { ...route, status_code: '404' }, `${DURATION}_sum`)).toBeGreaterThan(0);
    expect(after.family(REQUESTS).type).toBe('counter');
  });

  it('counts every 429 a rate limit sends, by route, on REST and GraphQL alike', async () => {
    const user = await ctx.createUser(admin.accountId, 'agent');
    const wrong = basicHeader(user.email, 'not-the-password');
    const before = await scrape(base);
    const refused = (s: Scrape, route: string) => s.value(REFUSALS, { method: route === '/graphql' ? 'POST' : 'GET', route }) ?? 0;
    // (the route label is the pattern as registered: /users/me.json is a route of its own, /clients/:id takes 5.json too)
    for (let i = 0; i < 2; i++) expect((await get('/api/v2/users/me.json', { authorization: wrong })).status).toBe(401);
    expect((await get('/api/v2/users/me.json', { authorization: user.basic })).status).toBe(429);
    const gql = await fetch(`${base}/graphql`, { method: 'POST', headers: { authorization: user.basic, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { id } }' }) });
    expect(gql.status).toBe(429);

    const after = await scrape(base);
    expect(refused(after, '/api/v2/users/me.json') - refused(before, '/api/v2/users/me.json')).toBe(1);
    expect(refused(after, '/graphql') - refused(before, '/graphql')).toBe(1);
    expect(after.value(REQUESTS, { method: 'GET', route: '/api/v2/users/me.json', status_code: '429' })).toBeGreaterThanOrEqual(1);
  });

  it('shows the job queue read at scrape time, and the Node process metrics with a prefix; no pool on the embedded database', async () => {
    const s = await scrape(base);
    for (const name of ['jobs_pending', 'jobs_due', 'jobs_running', 'jobs_dead', 'jobs_oldest_due_age_seconds']) {
      expect(s.family(name).type).toBe('gauge');
      expect(s.value(name)).toBeGreaterThanOrEqual(0);
    }
    expect(s.family('helpdesk_process_cpu_seconds_total').type).toBe('counter');
    expect(s.value('helpdesk_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(s.family('helpdesk_nodejs_eventloop_lag_seconds').type).toBe('gauge');
    if (ctx.db.kind === 'pglite') {
      expect(s.families.has('db_pool_connections')).toBe(false);
    } else {
      expect(s.value('db_pool_max_connections')).toBeGreaterThan(0);
      expect(s.value('db_pool_connections')).toBeGreaterThanOrEqual(s.value('db_pool_idle_connections')!);
      expect(s.value('db_pool_waiting_clients')).toBeGreaterThanOrEqual(0);
    }
  });

  it('is open on loopback without METRICS_TOKEN outside production, and refused (403) to anyone else', async () => {
    const far = await ctx.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3' });
    expect(far.statusCode).toBe(403);
    expect(far.json()).toEqual({ error: 'Forbidden', description: 'You do not have access to this resource' });
    // a forwarded address says nothing: only the TCP peer counts
    const forwarded = await ctx.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(forwarded.statusCode).toBe(403);
    expect((await ctx.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
  });

  describe('webhook deliveries and the engine', () => {
    let engine: JobEngine;
    const servers: http.Server[] = [];
    beforeAll(async () => {
      engine = createJobEngine(ctx.db, ctx.app.services, { pollSeconds: 0.2, metrics: ctx.app.metrics, webhooks: { retryDelay: () => 0.05 } });
      await engine.start();
    });
    afterAll(async () => {
      await engine.stop();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    });

    /** a receiver answering its requests with these statuses in turn (the last repeats) */
    async function receiver(statuses: number[]): Promise<string> {
      let n = 0;
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(statuses[Math.min(n++, statuses.length - 1)]).end());
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    }

    it('shows every outcome from the start, at 0 before any delivery', async () => {
      const s = await scrape(base);
      for (const outcome of ['success', 'retrying', 'failed']) expect(s.value('webhook_delivery_attempts_total', { outcome })).toBe(0);
      for (const outcome of ['done', 'retried', 'dead']) expect(s.value('jobs_processed_total', { outcome })).toBeGreaterThanOrEqual(0);
    });

    it('counts delivery attempts by outcome: success, retrying, failed; and the jobs this engine processed', async () => {
      const rest = (url: string, payload: object) =>
        fetch(`${base}/api/v2${url}`, { method: 'POST', headers: { authorization: admin.basic, 'content-type': 'application/json' }, body: JSON.stringify(payload) });
      const attempts = (s: Scrape, outcome: string) => s.value('webhook_delivery_attempts_total', { outcome }) ?? 0;
      const before = await scrape(base);
      // 400 fails for good at once; 503 then 200 is one retry, then a success
      for (const statuses of [[400], [503, 200]]) {
        const res = await rest('/webhooks', { webhook: { name: 'Receiver', endpoint: await receiver(statuses), http_method: 'POST', request_format: 'json', status: 'active', subscriptions: ['zen:event-type:oauth_client.created'] } });
        expect(res.status).toBe(201);
      }
      expect((await rest('/oauth/clients', { name: 'Dashboard', company: 'Acme', client_type: 'confidential', scopes: 'read', redirect_uris: ['https://app.example.com/cb'] })).status).toBe(201);

      let after = await scrape(base);
      for (const end = Date.now() + 10_000; attempts(after, 'success') === attempts(before, 'success') || attempts(after, 'failed') === attempts(before, 'failed'); ) {
        if (Date.now() > end) throw new Error(`the deliveries did not end: ${after.text.split('\n').filter((l) => l.startsWith('webhook')).join('; ')}`);
        await new Promise((r) => setTimeout(r, 100));
        after = await scrape(base);
      }
      expect({ success: attempts(after, 'success') - attempts(before, 'success'), retrying: attempts(after, 'retrying') - attempts(before, 'retrying'), failed: attempts(after, 'failed') - attempts(before, 'failed') })
        .toEqual({ success: 1, retrying: 1, failed: 1 });
      // the fan-out and the deliveries, finished by this process's engine
      expect(after.value('jobs_processed_total', { outcome: 'done' })).toBeGreaterThanOrEqual(3);
      expect(after.value('jobs_processed_total', { outcome: 'retried' })).toBeGreaterThanOrEqual(1);
      // and stored as the counters say
      const stored = await ctx.db.sql<{ status: string }>("SELECT status FROM webhook_invocations WHERE status IN ('success', 'failed') ORDER BY status");
      expect(stored.map((r) => r.status)).toEqual(['failed', 'success']);
    });
  });

  it('keeps the counters of each app apart: another app in the same process starts from nothing', async () => {
    const other = await createTestApp();
    try {
      const otherBase = await other.app.fastify.listen({ port: 0, host: '127.0.0.1' });
      const s = await scrape(otherBase);
      expect(s.family(REQUESTS).samples).toEqual([]);
      expect((await scrape(base)).family(REQUESTS).samples.length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });
});

describe('METRICS_TOKEN (docs/api.md, "Metrics")', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';

  it('in production: 401 in the envelope with a Bearer challenge without the token or with a wrong one; the scrape with it; no secret in it', async () => {
    const ctx = await createTestApp({ env: 'production', metricsToken: TOKEN });
    try {
      const admin = await ctx.createUser(await ctx.createAccount(), 'admin');
      const base = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
      expect((await fetch(`${base}/api/v2/users/me.json`, { headers: { authorization: admin.basic } })).status).toBe(200);

      const none = await fetch(`${base}/metrics`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await none.json()).toEqual({ error: "Couldn't authenticate you" });
      for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer x', `Basic ${Buffer.from(`a:${TOKEN}`).toString('base64')}`, TOKEN]) {
        const res = await fetch(`${base}/metrics`, { headers: { authorization: wrong } });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="metrics"/);
        expect(await res.json()).toEqual({ error: "Couldn't authenticate you" });
      }
      expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).headers.get('www-authenticate')).toBe('Bearer realm="metrics", error="invalid_token"');

      const s = await scrape(base, { authorization: `Bearer ${TOKEN}` });
      expect(s.value(REQUESTS, { method: 'GET', route: '/api/v2/users/me.json', status_code: '200' })).toBe(1);
      for (const secret of [TOKEN, admin.password, admin.basic, TEST_HASH_KEY.toString('utf8'), admin.email]) expect(s.text).not.toContain(secret);
      // nor in the logs
      expect(ctx.logs.join('\n')).not.toContain(TOKEN);
    } finally {
      await ctx.close();
    }
  });

  it('outside production too, once set: the token is required even on loopback', async () => {
    const ctx = await createTestApp({ metricsToken: TOKEN });
    try {
      expect((await ctx.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect((await ctx.inject({ method: 'GET', url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } })).statusCode).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  it('in production without it: /metrics does not exist (404), and the start log says how to turn it on', async () => {
    const ctx = await createTestApp({ env: 'production' });
    try {
      const res = await ctx.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'RecordNotFound', description: 'Not found' });
      expect(ctx.app.metrics).toBeUndefined();
      expect(ctx.logs.join('\n')).toContain('GET /metrics is off: NODE_ENV=production and METRICS_TOKEN is unset; set METRICS_TOKEN');
    } finally {
      await ctx.close();
    }
  });
});

describe('the purge in /metrics (docs/api.md, "Metrics")', () => {
  const finishedAt = new Date('2026-11-27T03:00:05Z');
  const run = { startedAt: new Date('2026-11-27T03:00:00Z'), finishedAt, durationMs: 5250, removed: { oauth_tokens: 1200, rate_window_hits: 37 }, nextRunAt: new Date('2026-11-27T04:00:00Z') };

  async function scrapeWith(lastRun: () => Promise<typeof run | null>) {
    const ctx = await createTestApp({ retention: { lastRun } });
    try {
      const started = Date.now();
      const res = await ctx.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      return { s: new Scrape(res.body, parsePrometheusText(res.body)), ms: Date.now() - started, logs: ctx.logs };
    } finally {
      await ctx.close();
    }
  }

  it("shows the last run's end, duration, rows removed by table and the next run", async () => {
    const { s } = await scrapeWith(async () => run);
    expect(s.value('retention_last_run_timestamp_seconds')).toBe(finishedAt.getTime() / 1000);
    expect(s.value('retention_last_run_duration_seconds')).toBe(5.25);
    expect(s.value('retention_last_run_removed', { table: 'oauth_tokens' })).toBe(1200);
    expect(s.value('retention_last_run_removed', { table: 'rate_window_hits' })).toBe(37);
    expect(s.value('retention_next_run_timestamp_seconds')).toBe(Date.parse('2026-11-27T04:00:00Z') / 1000);
  });

  it('no figures before the first run; none either, within about 2 seconds, when they do not come (counted as a scrape error)', async () => {
    const never = await scrapeWith(async () => null);
    for (const name of ['retention_last_run_timestamp_seconds', 'retention_last_run_duration_seconds', 'retention_last_run_removed', 'retention_next_run_timestamp_seconds']) {
      expect(never.s.family(name).samples).toEqual([]);
    }
    expect(never.s.value('metrics_scrape_errors_total', { source: 'retention' })).toBeUndefined();

    const hung = await scrapeWith(() => new Promise(() => {}));
    expect(hung.ms).toBeLessThan(5000);
    expect(hung.s.family('retention_last_run_timestamp_seconds').samples).toEqual([]);
    // the rest of the scrape is there
    expect(hung.s.value('jobs_pending')).toBeGreaterThanOrEqual(0);
    expect(hung.s.value('metrics_scrape_errors_total', { source: 'retention' })).toBe(1);
    expect(hung.logs.join('\n')).toContain('metrics: a scrape-time read failed');
  });

  it("shows the service's own purge: no figures before its first run, then that run's", async () => {
    const ctx = await createTestApp();
    try {
      const scrape = async () => (await ctx.inject({ method: 'GET', url: '/metrics' })).body;
      expect(await scrape()).not.toMatch(/^retention_last_run_removed\{/m);
      // a run of the purge (as the recurring job or the CLI makes one), on the app's database
      await createServices({ db: ctx.db, hashKey: TEST_HASH_KEY, limits: DEFAULT_LIMITS }).retention.run();
      const body = await scrape();
      expect(body).toMatch(/^retention_last_run_removed\{table="oauth_tokens"\} 0$/m);
      expect(body).toMatch(/^retention_last_run_timestamp_seconds \d+(\.\d+)?$/m);
    } finally {
      await ctx.close();
    }
  });
});
