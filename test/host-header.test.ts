import { connect, type AddressInfo } from 'node:net';
import { createTestApp, insertToken, type TestContext, type TestUser } from './helpers/test-app';

// A bad Host header is client input, never a 500. The base of url fields, Location
// headers and pagination links was built from request.protocol and request.host,
// and `new URL()` threw on `Host: [`, `Host: a b`, `x:99999`, an empty Host and an
// HTTP/1.0 request without one. Now the Host is validated once (request-context.ts):
// - PUBLIC_URL unset: a bad or missing Host on an API request is 400 InvalidRequest
//   "Invalid Host header" (REST envelope; GraphQL BAD_REQUEST);
// - PUBLIC_URL set: links always come from PUBLIC_URL, and a bad Host is the plain host.
// The requests go over raw TCP: no HTTP client sends such headers.

const PUBLIC_URL = 'https://help.example.com';
const LIST = '/api/v2/oauth/tokens.json?page=1&per_page=1';
const QUERY = JSON.stringify({ query: '{ me { id } oauthTokens(first: 1) { edges { node { id url } } } }' });

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request written by hand on a fresh connection; the whole reply, read until the server closes. */
function raw(port: number, request: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('no reply within 10 s')));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        for (let rest = body; ; ) {
          const eol = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, eol), 16);
          if (!size) break;
          out += rest.slice(eol + 2, eol + 2 + size);
          rest = rest.slice(eol + 2 + size + 2);
        }
        body = out;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(request);
  });
}

/** The Host line of each case (null: none at all), and the HTTP version it goes with. */
const BAD_HOSTS: [string, string | null, '1.0' | '1.1'][] = [
  ['Host: [', '[', '1.1'],
  ['Host: a b', 'a b', '1.1'],
  ['Host: x:99999', 'x:99999', '1.1'],
  ['an empty Host', '', '1.1'],
  ['HTTP/1.0 without Host', null, '1.0'],
  ['Host: x:0', 'x:0', '1.1'],
  ['Host: 999.1.1.1', '999.1.1.1', '1.1'],
  ['Host: user@host', 'user@host', '1.1'],
];

function get(path: string, host: string | null, version: string, authorization: string): string {
  return `GET ${path} HTTP/${version}\r\n${host === null ? '' : `Host: ${host}\r\n`}Authorization: ${authorization}\r\nConnection: close\r\n\r\n`;
}
function post(host: string | null, version: string, authorization: string): string {
  return (
    `POST /graphql HTTP/${version}\r\n${host === null ? '' : `Host: ${host}\r\n`}Authorization: ${authorization}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(QUERY)}\r\nConnection: close\r\n\r\n${QUERY}`
  );
}

async function listening(options: { publicUrl?: string }): Promise<{ ctx: TestContext; port: number; admin: TestUser }> {
  const ctx = await createTestApp(options);
  const admin = await ctx.createUser(await ctx.createAccount(), 'admin', { password: 'host-header-admin-pw' });
  // two tokens: page 1 of size 1 has a next page, so that a link is built
  await insertToken(ctx, admin);
  await insertToken(ctx, admin);
  await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
  return { ctx, port: (ctx.app.fastify.server.address() as AddressInfo).port, admin };
}

describe('bad Host headers, PUBLIC_URL unset', () => {
  let ctx: TestContext;
  let port: number;
  let admin: TestUser;
  beforeAll(async () => {
    ({ ctx, port, admin } = await listening({}));
  });
  afterAll(() => ctx.close());

  it.each(BAD_HOSTS)('%s: REST answers 400 "Invalid Host header" in the envelope', async (_name, host, version) => {
    const reply = await raw(port, get(LIST, host, version, admin.basic));
    expect({ status: reply.status, body: JSON.parse(reply.body) }).toEqual({ status: 400, body: { error: 'InvalidRequest', description: 'Invalid Host header' } });
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it.each(BAD_HOSTS)('%s: GraphQL answers 400 BAD_REQUEST "Invalid Host header"', async (_name, host, version) => {
    const reply = await raw(port, post(host, version, admin.basic));
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body).errors[0]).toMatchObject({ message: 'Invalid Host header', extensions: { code: 'BAD_REQUEST' } });
  });

  it('serves good Host headers as before: names, IPv4 and IPv6 literals, with or without a port', async () => {
    for (const host of [`127.0.0.1:${port}`, 'localhost', 'api.example.com:443', '[::1]:8080', 'under_score.example.', 'Mixed.Case.Example']) {
      const reply = await raw(port, get(LIST, host, '1.1', admin.basic));
      expect({ host, status: reply.status }).toEqual({ host, status: 200 });
      // (a URL's host is lower case)
      expect(JSON.parse(reply.body).next_page).toBe(`http://${host.toLowerCase()}/api/v2/oauth/tokens.json?page=2&per_page=1`);
    }
  });

  it('keeps /healthz answering an HTTP/1.0 request without Host', async () => {
    const reply = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect({ status: reply.status, body: JSON.parse(reply.body) }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('logged no error for any of them', () => {
    expect(ctx.logs.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });
});

describe('bad Host headers, PUBLIC_URL set', () => {
  let ctx: TestContext;
  let port: number;
  let admin: TestUser;
  beforeAll(async () => {
    ({ ctx, port, admin } = await listening({ publicUrl: PUBLIC_URL }));
  });
  afterAll(() => ctx.close());

  it.each(BAD_HOSTS)('%s: REST serves the plain host, links from PUBLIC_URL', async (_name, host, version) => {
    const reply = await raw(port, get(LIST, host, version, admin.basic));
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).next_page).toBe(`${PUBLIC_URL}/api/v2/oauth/tokens.json?page=2&per_page=1`);
  });

  it.each(BAD_HOSTS)('%s: GraphQL serves the plain host, urls from PUBLIC_URL', async (_name, host, version) => {
    const reply = await raw(port, post(host, version, admin.basic));
    expect(reply.status).toBe(200);
    const { data } = JSON.parse(reply.body);
    expect(data.oauthTokens.edges[0].node.url).toMatch(new RegExp(`^${PUBLIC_URL}/api/v2/oauth/tokens/\\d+\\.json$`));
  });

  it('keeps /healthz answering an HTTP/1.0 request without Host', async () => {
    const reply = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(reply.status).toBe(200);
  });

  it('logged no error for any of them', () => {
    expect(ctx.logs.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });
});
