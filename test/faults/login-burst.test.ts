import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { hashPassword } from '../../src/domain/auth/passwords';
import { killAll, runCli, startServer, tempDir, type ServerHandle } from '../helpers/processes';
import { startStack, type Stack } from '../helpers/service-stack';
import { basicHeader } from '../helpers/test-app';

// Password KDF starvation (the issue "Authorization written once"): 100 concurrent
// Basic requests with random unknown emails made a real user's login wait 12.75 s,
// queued behind 100 scrypt runs. Now the KDF queue is bounded (passwords.ts: what does
// not fit is answered 503 with Retry-After at once, and counted as no failure) and
// served round-robin across client addresses. Against a real server process: a burst
// of 100 guesses from four client addresses (127.0.0.2–5, bound with localAddress),
// and meanwhile the first login of a known user from another address (127.0.0.1),
// several rounds: each login answers 200 within 2 s; no guess gets a 500.
// On PostgreSQL (a server of the test's own) and on the embedded database.

jest.setTimeout(240_000);

const ROUNDS = 3;
const BURST = 100;
const ATTACKERS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
const LEGIT_ADDRESS = '127.0.0.1';
const LOGIN_LIMIT_MS = 2_000;
const PASSWORD = 'burst-victim-password';
const ME = JSON.stringify({ query: '{ me { email } }' });

interface Reply {
  status: number;
  retryAfter?: string;
  body: string;
  ms: number;
}

/** POST /graphql (or GET a REST path) from a given local address, on a connection of its own. */
function send(port: number, localAddress: string, authorization: string, rest: boolean): Promise<Reply> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        agent: false,
        method: rest ? 'GET' : 'POST',
        path: rest ? '/api/v2/oauth/tokens/current.json' : '/graphql',
        headers: rest ? { authorization } : { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(ME) },
        timeout: 60_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body, ms: performance.now() - started }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(rest ? undefined : ME);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface Round {
  login: Reply;
  /** the login was sent while the burst was being refused (the queue full), or 100 ms into it */
  loginSentAfterMs: number;
  /** guesses not yet answered when the login was sent */
  pendingAtLogin: number;
  burst: Reply[];
}

/** A burst of BURST guesses; the known user's first login starts at the first 503 (the queue is full) or 100 ms in. */
async function round(port: number, email: string): Promise<Round> {
  const started = performance.now();
  let fire!: () => void;
  const full = new Promise<void>((resolve) => (fire = resolve));
  const timer = setTimeout(fire, 100);
  let answered = 0;
  const burst = Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const reply = await send(port, ATTACKERS[i % ATTACKERS.length], basicHeader(`guess-${randomUUID()}@example.com`, 'guess'), i % 2 === 1);
      answered++;
      if (reply.status === 503) fire();
      return reply;
    }),
  );
  await full;
  clearTimeout(timer);
  const loginSentAfterMs = performance.now() - started;
  const pendingAtLogin = BURST - answered;
  const login = await send(port, LEGIT_ADDRESS, basicHeader(email, PASSWORD), false);
  return { login, loginSentAfterMs, pendingAtLogin, burst: await burst };
}

function report(label: string, rounds: Round[], alone: Reply): void {
  const all = rounds.flatMap((r) => r.burst);
  const byStatus: Record<number, number> = {};
  for (const r of all) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  console.log(
    `login-burst figures (${label}):\n${JSON.stringify(
      {
        loginAloneMs: Math.round(alone.ms),
        loginUnderBurstMs: rounds.map((r) => Math.round(r.login.ms)),
        loginSentAfterMs: rounds.map((r) => Math.round(r.loginSentAfterMs)),
        guessesPendingAtLogin: rounds.map((r) => r.pendingAtLogin),
        burstByStatus: byStatus,
        burst503MedianMs: Math.round(median(all.filter((r) => r.status === 503).map((r) => r.ms))),
        burst401MaxMs: Math.round(Math.max(...all.filter((r) => r.status === 401).map((r) => r.ms))),
      },
      null,
      2,
    )}`,
  );
}

function expectRounds(rounds: Round[], emails: string[]): void {
  for (const [i, r] of rounds.entries()) {
    expect({ status: r.login.status, body: JSON.parse(r.login.body) }).toEqual({ status: 200, body: { data: { me: { email: emails[i] } } } });
    expect(r.login.ms).toBeLessThan(LOGIN_LIMIT_MS);
    // the guesses: answered 401, or refused at once with 503 and Retry-After; never a 500
    expect([...new Set(r.burst.map((b) => b.status))].filter((s) => s !== 401 && s !== 503)).toEqual([]);
    for (const b of r.burst.filter((x) => x.status === 503)) expect(b.retryAfter).toBe('1');
  }
}

describe('a burst of guesses does not starve a real login (PostgreSQL)', () => {
  let stack: Stack;
  let server: ServerHandle;
  const emails = Array.from({ length: ROUNDS + 1 }, (_, i) => `burst-victim-${i}@example.com`);
  const rounds: Round[] = [];
  let alone: Reply;

  beforeAll(async () => {
    ({ stack, server } = await startStack());
    await stack.sql.query(
      `INSERT INTO users (account_id, name, email, email_key, role, password_hash)
       SELECT a.id, e, e, e, 'agent', $2 FROM accounts a, unnest($1::text[]) AS e WHERE a.name = 'default'`,
      [emails, await hashPassword(PASSWORD)],
    );
    // a first login with no burst, for comparison
    alone = await send(server.port, LEGIT_ADDRESS, basicHeader(emails[ROUNDS], PASSWORD), false);
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(server.port, emails[i]));
  }, 180_000);
  afterAll(async () => {
    if (rounds.length) report('PostgreSQL', rounds, alone);
    await stack?.close();
  }, 60_000);

  it('answers each known user’s first login 200 within 2 s while 100 guesses arrive; the guesses 401 or 503', () => {
    expect(alone.status).toBe(200);
    expectRounds(rounds, emails);
  });

  it('counted only the guesses that were answered, per address and per email', async () => {
    const answered = rounds.flatMap((r) => r.burst).filter((b) => b.status === 401).length;
    const [{ n }] = (await stack.sql.query<{ n: string }>(`SELECT count(*) AS n FROM rate_window_hits WHERE key LIKE 'login-address:%'`)).rows;
    expect(Number(n)).toBe(answered);
    const [{ e }] = (await stack.sql.query<{ e: string }>(`SELECT count(*) AS e FROM rate_window_hits WHERE key LIKE 'login-email:%'`)).rows;
    expect(Number(e)).toBe(answered);
    expect(server.logs.filter((l) => /unhandled error|"level":50|"level":60/.test(l))).toEqual([]);
  });
});

describe('a burst of guesses does not starve a real login (embedded database)', () => {
  const data = tempDir('login-burst-');
  const emails = Array.from({ length: ROUNDS + 1 }, (_, i) => `burst-victim-${i}@example.com`);
  const env = { DATA_DIR: data.path, HASH_KEY: 'login-burst-hash-key-0123456789abcdef' };
  let server: ServerHandle;
  const rounds: Round[] = [];
  let alone: Reply;

  beforeAll(async () => {
    // users through the CLI: the server holds the embedded database once it runs
    const account = await runCli(['account', 'create', '--name', 'burst'], env);
    expect(account.code).toBe(0);
    const accountId = String(JSON.parse(account.stdout).id);
    for (const email of emails) {
      const user = await runCli(['user', 'create', '--account', accountId, '--email', email, '--password', PASSWORD, '--role', 'agent'], env);
      expect(user.code).toBe(0);
    }
    server = await startServer(env);
    alone = await send(server.port, LEGIT_ADDRESS, basicHeader(emails[ROUNDS], PASSWORD), false);
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(server.port, emails[i]));
  }, 180_000);
  afterAll(async () => {
    if (rounds.length) report('embedded PGlite', rounds, alone);
    await killAll();
    data.remove();
  }, 60_000);

  it('answers each known user’s first login 200 within 2 s while 100 guesses arrive; the guesses 401 or 503', () => {
    expect(alone.status).toBe(200);
    expectRounds(rounds, emails);
    expect(server.logs.filter((l) => /unhandled error|"level":50|"level":60/.test(l))).toEqual([]);
  });
});
