import * as oauth from 'oauth4webapi';
import type { Viewer } from '../../src/domain/auth/viewer';
import { createTestApp, type TestContext, type TestUser } from './test-app';

// The authorization server over real HTTP on 127.0.0.1 (fastify.listen on port
// 0), for oauth4webapi and fetch; admin calls (clients, tokens) go through REST.

export const REDIRECT = 'https://app.example.com/oauth/callback';
/** RFC 7636 Appendix B */
export const RFC7636 = { verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' };
/** oauth4webapi refuses plain http unless told: the test server is on loopback */
export const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

export interface RegisteredClient {
  id: number;
  identifier: string;
  secret: string;
  type: 'public' | 'confidential';
  /** oauth4webapi's view of it */
  client: oauth.Client;
}

export interface OAuthStack {
  ctx: TestContext;
  base: string;
  admin: TestUser;
  agent: TestUser;
  as: oauth.AuthorizationServer;
  register(opts?: { type?: 'public' | 'confidential'; scopes?: string; redirectUris?: string[]; by?: TestUser }): Promise<RegisteredClient>;
  /** what the consent page does after Allow: validate the request, then issue the code (domain functions) */
  authorize(client: RegisteredClient, opts?: { user?: TestUser; verifier?: string | null; scope?: string; state?: string; redirectUri?: string }): Promise<URLSearchParams>;
  viewerOf(user: TestUser): Pick<Viewer, 'accountId' | 'userId'>;
  post(path: string, params: Record<string, string>, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  postJson(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  /** GET /api/v2/oauth/tokens/current.json with a Bearer token */
  current(token: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

async function parse(res: Response) {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body };
}

/** The stack on a test app of its own (createTestApp's options: e.g. `dataDir`, for a server process or the CLI to open the same database). */
export async function startOAuthStack(options: Parameters<typeof createTestApp>[0] = {}): Promise<OAuthStack> {
  const ctx = await createTestApp(options);
  const address = await ctx.app.fastify.listen({ port: 0, host: '127.0.0.1' });
  const base = address.replace('localhost', '127.0.0.1');
  const account = await ctx.createAccount();
  const admin = await ctx.createUser(account, 'admin');
  const agent = await ctx.createUser(account, 'agent');
  const as = await oauth.processDiscoveryResponse(new URL(base), await oauth.discoveryRequest(new URL(base), { algorithm: 'oauth2', ...INSECURE }));
  const viewerOf = (user: TestUser) => ({ accountId: user.accountId, userId: user.id });

  const stack: OAuthStack = {
    ctx, base, admin, agent, as, viewerOf,
    async register(opts = {}) {
      const res = await ctx.inject({
        method: 'POST', url: '/api/v2/oauth/clients', headers: { authorization: (opts.by ?? admin).basic },
        payload: { name: 'OAuth app', company: 'Acme', client_type: opts.type ?? 'confidential', scopes: opts.scopes ?? 'read write', redirect_uris: opts.redirectUris ?? [REDIRECT] },
      });
      if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.body}`);
      const c = res.json();
      return { id: c.id, identifier: c.client_identifier, secret: c.client_secret, type: c.client_type, client: { client_id: c.client_identifier } };
    },
    async authorize(client, opts = {}) {
      const verifier = opts.verifier === undefined ? oauth.generateRandomCodeVerifier() : opts.verifier;
      const query: Record<string, string> = { response_type: 'code', client_id: client.identifier, redirect_uri: opts.redirectUri ?? REDIRECT, state: opts.state ?? 'st-1' };
      if (opts.scope !== undefined) query.scope = opts.scope;
      if (verifier !== null) Object.assign(query, { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const check = await ctx.app.services.oauthServer.validateAuthorizationRequest(query);
      if (!check.ok) throw new Error(`authorization request refused: ${check.error.description}`);
      const { code } = await ctx.app.services.oauthServer.issueAuthorizationCode({ ...check.request, user: viewerOf(opts.user ?? agent) });
      // the redirect the consent page sends the browser to (RFC 9207 iss included)
      return new URLSearchParams({ code, state: check.request.state!, iss: as.issuer });
    },
    async post(path, params, headers = {}) {
      return parse(await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(params).toString() }));
    },
    async postJson(path, body, headers = {}) {
      return parse(await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }));
    },
    async current(token) {
      const res = await parse(await fetch(`${base}/api/v2/oauth/tokens/current.json`, { headers: { authorization: `Bearer ${token}` } }));
      return { status: res.status, body: res.body };
    },
    close: () => ctx.close(),
  };
  return stack;
}

export function basicClientAuth(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}
