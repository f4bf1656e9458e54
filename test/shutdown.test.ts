import http from 'node:http';
import { killAll, processDatabase, startServer } from './helpers/processes';
import { basicHeader } from './helpers/test-app';

// docs/api.md, "Operations": SIGTERM stops accepting, finishes in-flight requests, closes the
// database and exits 0 — promptly. The server runs as in production
// (NODE_ENV=production): Apollo Server installs its own signal handlers outside
// NODE_ENV=test, and those once made shutdown hang for ~10 s.

jest.setTimeout(120_000);

const HASH_KEY = 'shutdown-test-hash-key-0123456789abcdef';
const ADMIN = { email: 'admin@example.com', password: 'shutdown-admin-pw' };

describe('graceful shutdown of a production server', () => {
  let database: Awaited<ReturnType<typeof processDatabase>> | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await processDatabase('shutdown-test-');
    // production requires PUBLIC_URL (links and subdomains never come from the Host header)
    env = { NODE_ENV: 'production', HASH_KEY, PUBLIC_URL: 'https://help.example.com', ADMIN_PASSWORD: ADMIN.password, ...database.env };
  });
  afterAll(async () => {
    try {
      await killAll();
    } finally {
      await database?.remove();
    }
  });

  it('exits 0 within 5 s of SIGTERM, after answering a request already in flight', async () => {
    const server = await startServer(env);
    // A first request warms the HTTP path, so that the next one reaches its handler
    // within milliseconds even on a loaded machine (one that arrives after SIGTERM
    // rightly gets Fastify's 503).
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // The request in flight: its headers and the start of its body are sent, then, once the
    // server has surely read the headers (the request is then an active one, not an idle
    // connection that closing may drop), SIGTERM, and then the rest of the body. A Basic
    // request then costs a password KDF (~200 ms of CPU) before its answer.
    const body = JSON.stringify({ query: '{ me { email } }' });
    const request = http.request(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), authorization: basicHeader(ADMIN.email, ADMIN.password) },
    });
    const inFlight = new Promise<{ status: number; body: { data?: { me?: unknown } } }>((resolve, reject) => {
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += String(chunk)));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      request.on('error', reject);
    });
    request.write(body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 500));
    const started = Date.now();
    const stopped = server.stop(15_000);
    await new Promise((r) => setTimeout(r, 100));
    request.end(body.slice(10));
    const code = await stopped;
    const elapsed = Date.now() - started;

    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body.data!.me).toEqual({ email: ADMIN.email });
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(5000);
    expect(server.logs.join('\n')).toContain('shutting down');
    expect(server.logs.join('\n')).not.toContain('shutdown took too long');
  });
});
