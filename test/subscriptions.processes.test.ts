import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { describeOnPostgres, freshPostgresDatabase } from './helpers/postgres';
import { killAll, runCli, startServer, tempDir, type ServerHandle } from './helpers/processes';
import { basicHeader } from './helpers/test-app';

// Live events across processes (docs/api.md, "Live events"): two servers on one
// PostgreSQL database; an event committed through process A reaches a subscriber
// connected to process B (PostgreSQL LISTEN/NOTIFY), and only the subscribers of
// its own account.

jest.setTimeout(120_000);

const ADMIN = { email: 'admin@example.com', password: 'subscriptions-processes-pw' };
const BETA = { email: 'admin@beta.test', password: 'beta-admin-password-1' };
const EVENTS = 'subscription { accountEvents(types: ["zen:event-type:oauth_client.created"]) { type subject } }';

type Event = { type: string; subject: string };

/** A subscriber on `server`: the events it received so far, and a wait for the next. */
function subscriber(server: ServerHandle, authorization: string) {
  const client: Client = createClient({ url: `${server.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { authorization }, retryAttempts: 0 });
  const events: Event[] = [];
  const errors: unknown[] = [];
  client.subscribe<{ accountEvents: Event }>({ query: EVENTS }, {
    next: (r) => (r.data ? events.push(r.data.accountEvents) : errors.push(r.errors)),
    error: (e) => errors.push(e),
    complete: () => undefined,
  });
  return { client, events, errors };
}

async function createOAuthClient(server: ServerHandle, user: { email: string; password: string }, name: string): Promise<number> {
  const res = await fetch(`${server.url}/api/v2/oauth/clients`, {
    method: 'POST',
    headers: { authorization: basicHeader(user.email, user.password), 'content-type': 'application/json' },
    body: JSON.stringify({ name, scopes: 'read', redirect_uris: 'https://example.com/cb' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

/** Makes changes on `server` until `sub` has seen one (graphql-ws does not acknowledge a subscribe): the ids made. */
async function untilLive(sub: { events: Event[] }, server: ServerHandle, user: typeof ADMIN): Promise<number[]> {
  const made: number[] = [];
  const deadline = Date.now() + 15_000;
  while (sub.events.length === 0) {
    if (Date.now() > deadline) throw new Error('the subscriber never saw an event');
    made.push(await createOAuthClient(server, user, `probe-${made.length}`));
    await new Promise((r) => setTimeout(r, 200));
  }
  return made;
}

async function waitFor(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeOnPostgres('live events across two processes', () => {
  let url: string;
  let drop: () => Promise<void>;
  let data: ReturnType<typeof tempDir>;
  let a: ServerHandle;
  let b: ServerHandle;
  const clients: Client[] = [];

  beforeAll(async () => {
    data = tempDir('subscriptions-processes-');
    ({ url, drop } = await freshPostgresDatabase());
    const env = { DATABASE_URL: url, DATA_DIR: data.path, ADMIN_PASSWORD: ADMIN.password };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    const beta = JSON.parse((await runCli(['account', 'create', '--name', 'beta'], { DATABASE_URL: url, DATA_DIR: data.path })).stdout) as { id: number };
    const user = await runCli(['user', 'create', '--account', String(beta.id), '--email', BETA.email, '--password', BETA.password, '--role', 'admin'], { DATABASE_URL: url, DATA_DIR: data.path });
    expect(user.code).toBe(0);
  });
  afterAll(async () => {
    try {
      await Promise.all(clients.map((c) => c.dispose()));
      await killAll();
      await drop?.();
    } finally {
      data?.remove();
    }
  });

  it('an event committed through process A reaches a subscriber on process B, within 2 s', async () => {
    const sub = subscriber(b, basicHeader(ADMIN.email, ADMIN.password));
    clients.push(sub.client);
    const probes = await untilLive(sub, a, ADMIN);
    expect(probes.map((id) => `zen:oauth_client:${id}`)).toContain(sub.events[0].subject);
    const seen = sub.events.length;
    const id = await createOAuthClient(a, ADMIN, 'made on A');
    const started = Date.now();
    await waitFor(() => sub.events.some((e) => e.subject === `zen:oauth_client:${id}`));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(sub.events.slice(seen)).toEqual([{ type: 'zen:event-type:oauth_client.created', subject: `zen:oauth_client:${id}` }]);
    expect(sub.errors).toEqual([]);
  });

  it("a subscriber of account beta on process B never sees the default account's events from A", async () => {
    const sub = subscriber(b, basicHeader(BETA.email, BETA.password));
    clients.push(sub.client);
    const probes = await untilLive(sub, a, BETA);
    const others = [await createOAuthClient(a, ADMIN, 'not for beta'), await createOAuthClient(b, ADMIN, 'not for beta either')];
    const own = await createOAuthClient(a, BETA, 'for beta');
    await waitFor(() => sub.events.some((e) => e.subject === `zen:oauth_client:${own}`));
    const subjects = sub.events.map((e) => e.subject);
    for (const id of others) expect(subjects).not.toContain(`zen:oauth_client:${id}`);
    expect(subjects.every((s) => [...probes, own].map((id) => `zen:oauth_client:${id}`).includes(s))).toBe(true);
  });

  it('both stop on SIGTERM with exit code 0 while subscribers are connected', async () => {
    const sub = subscriber(b, basicHeader(ADMIN.email, ADMIN.password));
    clients.push(sub.client);
    await untilLive(sub, a, ADMIN);
    const started = Date.now();
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
