import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attempt, retryAfterSeconds, type AddressCheck } from '../src/webhooks/http-attempt';

// One webhook attempt against real local receivers: the guard sees the address the socket
// connects to (after DNS, so a hostname that resolves to a refused address is refused too),
// redirects are not followed, the deadline holds, and only the first KB of an answer is kept.

const allowAll: AddressCheck = () => undefined;
const refuseLoopback: AddressCheck = (address) => (address === '127.0.0.1' || address === '::1' ? 'a loopback address' : undefined);

describe('a webhook HTTP attempt', () => {
  let server: Server;
  let port: number;
  const received: { method?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok');

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method, headers: req.headers, body });
        handler(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    received.length = 0;
    handler = (_req, res) => res.end('ok');
  });

  const send = (url: string, check: AddressCheck = allowAll, timeoutMs = 2000) =>
    attempt({ url, method: 'POST', headers: { 'content-type': 'application/json', 'x-test': '1' }, body: '{"a":1}', timeoutMs, check });

  it('keeps connections alive between attempts, but never lends one to a stricter check (each new connection is checked)', async () => {
    const sockets = new Set<unknown>();
    const count = (socket: unknown) => sockets.add(socket);
    server.on('connection', count);
    try {
      const url = `http://localhost:${port}/hook`;
      for (let i = 0; i < 3; i++) expect(await send(url)).toMatchObject({ kind: 'response', status: 200 });
      // the three went over one connection
      expect(sockets.size).toBe(1);
      // the kept connection is to a loopback address: a check refusing those gets no connection at all
      expect(await send(url, refuseLoopback)).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1): a loopback address$/) });
      expect(received).toHaveLength(3);
    } finally {
      server.off('connection', count);
    }
  });

  it('POSTs the body and headers, and keeps status, duration and the answer', async () => {
    handler = (_req, res) => res.writeHead(202).end('accepted');
    const result = await send(`http://127.0.0.1:${port}/hook`);
    expect(result).toEqual({ kind: 'response', status: 202, durationMs: expect.any(Number), retryAfterSeconds: undefined, body: 'accepted' });
    expect(received).toEqual([expect.objectContaining({ method: 'POST', body: '{"a":1}', headers: expect.objectContaining({ 'x-test': '1', 'content-type': 'application/json' }) })]);
  });

  it('keeps only the first KB of a long answer', async () => {
    handler = (_req, res) => res.end('x'.repeat(100_000));
    const result = await send(`http://127.0.0.1:${port}/`);
    expect(result.kind === 'response' && result.body.length).toBe(1024);
  });

  it('refuses a literal address the guard refuses, sending nothing', async () => {
    const result = await send(`http://127.0.0.1:${port}/`, refuseLoopback);
    expect(result).toEqual({ kind: 'refused', durationMs: 0, reason: '127.0.0.1: a loopback address' });
    expect(received).toEqual([]);
  });

  it('refuses a hostname that resolves to a refused address (checked on the connecting lookup)', async () => {
    const result = await send(`http://localhost:${port}/`, refuseLoopback);
    expect(result).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1): a loopback address$/) });
    expect(received).toEqual([]);
  });

  it('does not follow a redirect', async () => {
    handler = (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
    const result = await send(`http://127.0.0.1:${port}/`);
    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(received).toHaveLength(1);
  });

  it('gives up at the deadline', async () => {
    handler = () => {}; // never answers
    const result = await send(`http://127.0.0.1:${port}/`, allowAll, 300);
    expect(result).toMatchObject({ kind: 'error', reason: 'no answer within 0.3 s' });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('reports a connection refused as an error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const free = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await send(`http://127.0.0.1:${free}/`)).toMatchObject({ kind: 'error', reason: expect.stringContaining('ECONNREFUSED') });
  });

  it('reads Retry-After in seconds or as a date', async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '7' }).end();
    expect(await send(`http://127.0.0.1:${port}/`)).toMatchObject({ kind: 'response', status: 429, retryAfterSeconds: 7 });
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(retryAfterSeconds('Wed, 25 Nov 2026 12:01:30 GMT', now)).toBe(90);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
  });
});
