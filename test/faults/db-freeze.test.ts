import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerHandle } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/service-stack';
import { call, countBy, graphql, runWorkers, sleep, statusKey, type Outcome } from '../helpers/traffic';

// A variant of faults 5a: PostgreSQL does not go away but stops answering (every one
// of its processes SIGSTOPped, as in a network partition or a stalled host), under
// twice as many concurrent requests as the pool has connections. Requests holding a
// connection wait for the database; the others must not wait forever nor fail as a
// bug: after the pool's 5 s connect timeout they answer 503 with the envelope.
// /readyz answers 503 within its own 2 s timeout, and all is well once it thaws.

jest.setTimeout(240_000);

const POOL_SIZE = 10;
const WORKERS = 2 * POOL_SIZE;
const FREEZE_MS = 8_000;
/** pg-pool's connectionTimeoutMillis, and a margin */
const POOL_WAIT_MS = 6_000;

let stack: Stack;
let server: ServerHandle;
let exited = false;

/** The postmaster and its children (backends, checkpointer, ...). */
function postgresPids(): number[] {
  const postmaster = Number(readFileSync(path.join(stack.pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('pgrep', ['-P', String(postmaster)]).toString().trim().split('\n').filter(Boolean).map(Number);
  return [postmaster, ...children];
}

function request(kind: number): Promise<Outcome> {
  const bearer = { authorization: stack.adminBearer };
  switch (kind % 3) {
    case 0:
      return call('rest list clients', `${server.url}/api/v2/oauth/clients.json`, { headers: bearer, timeoutMs: 60_000 });
    case 1:
      return graphql('graphql query', server.url, '{ me { email } oauthTokens(first: 5) { totalCount } }', {}, bearer, 60_000);
    default:
      return call('rest create token', `${server.url}/api/v2/oauth/tokens.json`, {
        method: 'POST',
        headers: bearer,
        body: { token: { client_id: stack.clientId, scopes: ['read'] } },
        timeoutMs: 60_000,
      });
  }
}

describe('PostgreSQL frozen (SIGSTOP) under more load than the pool has connections', () => {
  const outcomes: Outcome[] = [];
  let frozenAt = 0;
  let thawedAt = 0;
  let readyz: Outcome;
  let healthz: Outcome;

  beforeAll(async () => {
    ({ stack, server } = await startStack({ DB_POOL_SIZE: String(POOL_SIZE) }));
    void server.exited.then(() => (exited = true));
    let stopping = false;
    const load = runWorkers(
      WORKERS,
      async (worker, i) => {
        outcomes.push(await request(worker + i));
      },
      () => stopping,
    );
    let pids: number[] = [];
    try {
      await sleep(1_500);
      pids = postgresPids();
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
      frozenAt = Date.now();
      await sleep(500);
      [readyz, healthz] = await Promise.all([call('readyz', `${server.url}/readyz`, { timeoutMs: 10_000 }), call('healthz', `${server.url}/healthz`, { timeoutMs: 10_000 })]);
      await sleep(FREEZE_MS - (Date.now() - frozenAt));
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
      thawedAt = Date.now();
    }
    await sleep(3_000);
    stopping = true;
    await load;
  }, 180_000);
  afterAll(async () => {
    const during = outcomes.filter((o) => o.end > frozenAt && o.start < thawedAt);
    console.log(
      `db-freeze figures:\n${JSON.stringify(
        {
          freezeMs: thawedAt - frozenAt,
          requests: outcomes.length,
          byStatus: countBy(outcomes, statusKey),
          overlappingTheFreeze: countBy(during, statusKey),
          slowestMs: Math.max(...outcomes.map((o) => o.end - o.start)),
          readyz: readyz && { status: readyz.status, ms: readyz.end - readyz.start },
        },
        null,
        2,
      )}`,
    );
    await stack?.close();
  }, 60_000);

  it('answers every request, 2xx or 503 (never a 500), none later than the database comes back', () => {
    expect(outcomes.filter((o) => o.status === undefined).map((o) => `${o.kind}: ${o.error}`)).toEqual([]);
    expect([...new Set(outcomes.map((o) => o.status))].filter((s) => ![200, 201, 503].includes(s!))).toEqual([]);
    for (const o of outcomes) expect(o.end - o.start).toBeLessThan(FREEZE_MS + POOL_WAIT_MS);
  });

  it('requests beyond the pool answer 503 with the envelope of their API after the pool wait, not a hang', () => {
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const o of unavailable) {
      if (o.kind.startsWith('graphql')) expect((o.body as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
      else expect(o.body).toEqual({ error: 'ServiceUnavailable', description: expect.any(String) });
      expect(o.end - o.start).toBeLessThan(POOL_WAIT_MS);
    }
  });

  it('/readyz answers 503 within its timeout, /healthz 200', () => {
    expect({ status: readyz.status, body: readyz.body }).toEqual({ status: 503, body: { status: 'unavailable', reason: 'database unreachable' } });
    expect(readyz.end - readyz.start).toBeLessThan(3_000);
    expect(healthz.status).toBe(200);
  });

  it('serves normally once the database thaws, in the same process, and logged no unhandled error', () => {
    const after = outcomes.filter((o) => o.start >= thawedAt + 500);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.status! >= 300).map((o) => `${o.kind}: ${statusKey(o)}`)).toEqual([]);
    expect(exited).toBe(false);
    expect(server.logs.filter((l) => /unhandled error|"level":50|"level":60/.test(l))).toEqual([]);
  });
});
