import pg from 'pg';
import { createDb } from '../src/db/create-db';
import { hashPassword } from '../src/domain/auth/passwords';
import { TRANSITIONS, type CallbackStatus } from '../src/domain/voice/callback-transitions';
import { insertToken, TEST_HASH_KEY } from './helpers/test-app';
import { withPrisma, type TestDb } from './helpers/test-db';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, startServer, type ServerHandle } from './helpers/processes';

// The callback lifecycle exactly once under concurrency (docs/api.md, "The callback
// lifecycle"): two real server processes on one PostgreSQL database, each running the
// job engine (offer expiry, retries, the sweep), 200 callbacks and 20 agent bots that go
// away and come back, accept, decline, let offers expire, and report answered or no
// answer, each request through whichever process. Every decision is serialised by the
// account's lifecycle lock; this checks what that promises, from the history the
// decisions wrote: no agent ever held two offers, no request was offered twice at once,
// every request completed exactly once along the transition table, and nothing is left
// held at the end. And no answer was a 500.

jest.setTimeout(240_000);

const REQUESTS = 200;
const GROUPED_AGENTS = 20;
/** online agents outside the routed group: they must never be offered anything */
const OUTSIDERS = 2;
const OFFER_TIMEOUT = 2;
const MAX_ATTEMPTS = 5;
const RUN_MS = 120_000;
const CB = '/api/v2/channels/voice/callback_requests';
const ADMIN_PASSWORD = 'lifecycle-processes-admin-pw';

/** The (from, to) pairs of the transition table; a request starts queued (creation writes no history row). */
const ALLOWED = new Set(Object.values(TRANSITIONS).flatMap((t) => t.from.map((from) => `${from}>${t.to}`)));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)];

interface HistoryRow { id: string; callback_request_id: string; status: CallbackStatus; agent_id: string | null; reason: string | null; at: Date }

describeOnPostgres('the callback lifecycle across two server processes', () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let db: TestDb | undefined;
  let sql: pg.Pool | undefined;
  const servers: ServerHandle[] = [];

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    // the 30-per-window creation budget over 1 s instead of 10 minutes: 200 creations in seconds
    const env = {
      DATABASE_URL: database.url, ADMIN_PASSWORD, HASH_KEY: TEST_HASH_KEY.toString('utf8'), WEB_CONCURRENCY: '1', CALLBACK_RATE_WINDOW_SECONDS: '1',
    };
    // Started together: one migrates and creates the admin under the migration lock, the other waits.
    servers.push(...(await Promise.all([startServer(env), startServer(env)])));
    db = withPrisma(await createDb({ databaseUrl: database.url, poolSize: 2 }));
    sql = new pg.Pool({ connectionString: database.url, max: 2 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await killAll();
    await sql?.end();
    await db?.close();
    await database?.drop();
  }, 30_000);

  /** every HTTP answer the bots and the creator got, by status; the first few unexpected ones in full */
  const statuses = new Map<string, number>();
  const unexpected: string[] = [];
  const call = async (method: string, path: string, bearer: string, body?: unknown, expected = [200, 201, 204, 409]) => {
    const server = pick(servers);
    let res: Response;
    try {
      res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      statuses.set('network error', (statuses.get('network error') ?? 0) + 1);
      if (unexpected.length < 10) unexpected.push(`${method} ${path}: ${(err as Error).message}`);
      return { status: 0, body: undefined as any, headers: new Headers() };
    }
    const text = await res.text();
    const key = `${method} ${res.status}`;
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
    if (!expected.includes(res.status) && unexpected.length < 10) unexpected.push(`${method} ${path} via :${server.port}: ${res.status} ${text}`);
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      if (unexpected.length < 10) unexpected.push(`${method} ${path}: ${res.status} not JSON: ${text.slice(0, 200)}`);
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };

  it(`${REQUESTS} callbacks, ${GROUPED_AGENTS} agent bots, two processes: each completed exactly once, no agent or request ever offered twice at once`, async () => {
    const started = Date.now();
    const prisma = db!.prisma;
    const admin = (await prisma.user.findFirstOrThrow({ where: { emailKey: 'admin@example.com' } }));
    const accountId = admin.accountId;
    const adminToken = (await insertToken({ db: db! }, { id: admin.id, accountId })).token;
    // agents straight into the database, with Bearer tokens: the bots never pay for a password check
    const passwordHash = await hashPassword('never-used-agent-password');
    const agents: { id: bigint; token: string; grouped: boolean }[] = [];
    for (let i = 0; i < GROUPED_AGENTS + OUTSIDERS; i++) {
      const email = `bot-${i}@example.com`;
      const user = await prisma.user.create({ data: { accountId, email, emailKey: email, name: `bot ${i}`, role: 'agent', passwordHash } });
      agents.push({ id: user.id, token: (await insertToken({ db: db! }, { id: user.id, accountId })).token, grouped: i < GROUPED_AGENTS });
    }
    const setup = async (path: string, body: unknown, method = 'POST') => {
      const res = await call(method, path, adminToken, body);
      if (res.status !== (method === 'POST' ? 201 : 200)) throw new Error(`setup ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const phoneId = (await setup('/api/v2/channels/voice/phone_numbers', { phone_number: { number: '+14155550123' } })).phone_number.id as number;
    const groupId = (await setup('/api/v2/groups', { group: { name: 'Callbacks' } })).group.id as number;
    for (const agent of agents.filter((a) => a.grouped)) {
      await setup('/api/v2/group_memberships', { group_membership: { user_id: Number(agent.id), group_id: groupId } });
    }
    await setup('/api/v2/account/settings', {
      settings: { callback_offer_timeout: OFFER_TIMEOUT, callback_retry_delay: 1, callback_max_attempts: MAX_ATTEMPTS, wrap_up_time: 0 },
    }, 'PUT');
    const setupMs = Date.now() - started;

    let done = false;
    const deadline = Date.now() + RUN_MS;

    // The creator: 200 callbacks, ten at a time, through either process; a 429 of the
    // creation budget waits for its Retry-After (the only 429 expected).
    const creator = async () => {
      let next = 0;
      const one = async (n: number) => {
        const requester = `+4915123${String(n).padStart(6, '0')}`;
        while (!done) {
          const res = await call('POST', CB, adminToken, { callback_request: { phone_number_id: phoneId, requester_phone_number: requester, group_ids: [groupId] } }, [201, 429]);
          if (res.status === 201) return;
          await sleep(res.status === 429 ? Number(res.headers.get('retry-after') ?? 1) * 1000 : 500);
        }
      };
      await Promise.all(Array.from({ length: 10 }, async () => {
        while (next < REQUESTS && !done) await one(next++);
      }));
    };

    // A bot: now and then away and back (an offer it held is withdrawn), otherwise polls
    // for what is offered to it and takes it (mostly), declines it, or lets it expire;
    // a taken call is answered, or not answered while attempts remain (so that every
    // request can still complete).
    const wrongOffers: string[] = [];
    const availability = (agent: (typeof agents)[number], state: string) =>
      call('PUT', `/api/v2/channels/voice/availabilities/${agent.id}`, agent.token, { availability: { agent_state: state } });
    const bot = async (agent: (typeof agents)[number]) => {
      await availability(agent, 'online');
      while (!done && Date.now() < deadline) {
        if (Math.random() < 0.02) {
          await availability(agent, 'away');
          await sleep(100 + Math.random() * 300);
          await availability(agent, 'online');
          continue;
        }
        const list = await call('GET', `${CB}?agent_id=${agent.id}&status=offered`, agent.token);
        const offer = list.status === 200 ? (list.body.callback_requests[0] as { id: number; agent_id: number; status: string } | undefined) : undefined;
        if (!offer) {
          await sleep(100 + Math.random() * 100);
          continue;
        }
        if (offer.agent_id !== Number(agent.id) || offer.status !== 'offered') wrongOffers.push(JSON.stringify(offer));
        const r = Math.random();
        if (r < 0.05) {
          await sleep(OFFER_TIMEOUT * 1000 + 300); // missed: the timer hands it on
        } else if (r < 0.1) {
          await call('POST', `${CB}/${offer.id}/decline`, agent.token);
        } else if (r < 0.15) {
          await availability(agent, 'away'); // rescinded
          await sleep(50 + Math.random() * 200);
          await availability(agent, 'online');
        } else {
          const accepted = await call('POST', `${CB}/${offer.id}/accept`, agent.token);
          if (accepted.status !== 200) continue; // 409: the offer moved on meanwhile (expired)
          await sleep(Math.random() * 200);
          const attempts = accepted.body.callback_request.attempts as number;
          const outcome = attempts < MAX_ATTEMPTS && Math.random() < 0.15 ? 'no_answer' : 'answered';
          await call('POST', `${CB}/${offer.id}/outcome`, agent.token, { outcome });
        }
      }
    };

    const completed = async () => Number((await sql!.query("SELECT count(*) AS n FROM callback_requests WHERE status = 'completed'")).rows[0].n);
    const watcher = async () => {
      while (Date.now() < deadline && (await completed()) < REQUESTS) await sleep(250);
      done = true;
    };
    const runStarted = Date.now();
    // all settled before anything is checked (nothing of the run outlives the test); a failure stops the others
    const stopOnFailure = (task: Promise<void>) => task.catch((err: unknown) => {
      done = true;
      throw err;
    });
    const settled = await Promise.allSettled([creator(), watcher(), ...agents.map(bot)].map(stopOnFailure));
    const runMs = Date.now() - runStarted;
    for (const s of settled) if (s.status === 'rejected') throw s.reason;

    const summary = `setup ${setupMs} ms, run ${runMs} ms; answers: ${JSON.stringify(Object.fromEntries(statuses))}`;
    console.log(summary);
    expect({ summary, unexpected, wrongOffers }).toEqual({ summary, unexpected: [], wrongOffers: [] });
    expect(await completed()).toBe(REQUESTS);

    // ---- properties over the history the decisions wrote (id order = the order of the decisions under the lock)
    const { rows: history } = await sql!.query<HistoryRow>(
      'SELECT id, callback_request_id, status::text AS status, agent_id, reason, at FROM callback_request_history WHERE account_id = $1 ORDER BY id',
      [String(accountId)],
    );
    const { rows: requests } = await sql!.query<{ id: string; status: string; agent_id: string | null }>(
      'SELECT id, status::text AS status, agent_id FROM callback_requests WHERE account_id = $1 ORDER BY id', [String(accountId)],
    );
    expect(requests).toHaveLength(REQUESTS);
    const grouped = new Set(agents.filter((a) => a.grouped).map((a) => String(a.id)));
    const byRequest = new Map<string, HistoryRow[]>(requests.map((r) => [r.id, []]));
    for (const row of history) byRequest.get(row.callback_request_id)!.push(row);

    const violations: string[] = [];
    /** per agent: the offers it held, [history id of the offer, history id of the row that ended it) and the same in time */
    const held = new Map<string, { request: string; from: bigint; to: bigint; fromAt: number; toAt: number }[]>();
    for (const request of requests) {
      const rows = byRequest.get(request.id)!;
      let status: CallbackStatus = 'queued';
      let atBefore = 0;
      for (const [i, row] of rows.entries()) {
        if (!ALLOWED.has(`${status}>${row.status}`)) violations.push(`request ${request.id}: ${status} → ${row.status} (history ${row.id})`);
        if (row.at.getTime() < atBefore) violations.push(`request ${request.id}: history ${row.id} (${row.status}) at ${row.at.toISOString()} is before the row ahead of it`);
        atBefore = row.at.getTime();
        if (row.status === 'offered') {
          if (!grouped.has(String(row.agent_id))) violations.push(`request ${request.id}: offered to agent ${row.agent_id}, not in the routed group`);
          const end = rows[i + 1];
          if (!end) violations.push(`request ${request.id}: its last row is an offer`);
          else {
            // the row that ends an offer (accepted, or queued: missed, declined, rescinded) names the same agent
            if (end.agent_id !== row.agent_id) violations.push(`request ${request.id}: offered to ${row.agent_id}, then ${end.status} by ${end.agent_id}`);
            const list = held.get(String(row.agent_id)) ?? [];
            list.push({ request: request.id, from: BigInt(row.id), to: BigInt(end.id), fromAt: row.at.getTime(), toAt: end.at.getTime() });
            held.set(String(row.agent_id), list);
          }
        }
        if ((row.status === 'accepted' || row.status === 'dialing' || row.status === 'completed') && row.agent_id !== rows[i - 1]?.agent_id) {
          violations.push(`request ${request.id}: ${row.status} by ${row.agent_id} after ${rows[i - 1]?.status} by ${rows[i - 1]?.agent_id}`);
        }
        status = row.status;
      }
      const completions = rows.filter((r) => r.status === 'completed').length;
      if (completions !== 1) violations.push(`request ${request.id}: ${completions} completed rows`);
      if (status !== 'completed' || request.status !== 'completed') violations.push(`request ${request.id}: ends ${status} in its history, ${request.status} in its row`);
    }
    for (const [agentId, offers] of held) {
      offers.sort((a, b) => (a.from < b.from ? -1 : 1));
      for (let i = 1; i < offers.length; i++) {
        const [before, after] = [offers[i - 1], offers[i]];
        if (after.from < before.to) violations.push(`agent ${agentId} held requests ${before.request} and ${after.request} at once (history ${before.from}–${before.to}, ${after.from})`);
        if (after.fromAt < before.toAt) violations.push(`agent ${agentId}: the offer of ${after.request} is timed before the end of the offer of ${before.request}`);
      }
    }
    expect(violations.slice(0, 20)).toEqual([]);

    // the run went through every path it means to race: misses (the timer in either
    // process), declines, withdrawals, retries after no answer
    const reasons = new Map<string, number>();
    for (const row of history) if (row.status === 'queued') reasons.set(String(row.reason), (reasons.get(String(row.reason)) ?? 0) + 1);
    expect(['missed', 'declined', 'rescinded', 'no_answer'].filter((r) => !reasons.has(r))).toEqual([]);

    // nothing left held, and the agents' counters agree with the history
    const { rows: agentRows } = await sql!.query<{ user_id: string; offered_request_id: string | null; call_status: string | null; calls_accepted: number; calls_missed: number; callbacks_completed: number }>(
      'SELECT user_id, offered_request_id, call_status::text AS call_status, calls_accepted, calls_missed, callbacks_completed FROM agent_availabilities WHERE account_id = $1',
      [String(accountId)],
    );
    expect(agentRows).toHaveLength(GROUPED_AGENTS + OUTSIDERS);
    expect(agentRows.filter((a) => a.offered_request_id !== null || a.call_status !== null)).toEqual([]);
    const sum = (f: (a: (typeof agentRows)[number]) => number) => agentRows.reduce((n, a) => n + f(a), 0);
    expect({
      accepted: sum((a) => a.calls_accepted), missed: sum((a) => a.calls_missed), completed: sum((a) => a.callbacks_completed),
    }).toEqual({
      accepted: history.filter((h) => h.status === 'accepted').length, missed: reasons.get('missed') ?? 0, completed: REQUESTS,
    });
    for (const outsider of agents.filter((a) => !a.grouped)) expect(agentRows.find((a) => a.user_id === String(outsider.id))!.calls_accepted).toBe(0);
  });
});
