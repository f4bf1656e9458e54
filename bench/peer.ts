// The peer of issue 26 in the benchmark: a stock oidc-provider v9 (bench/peers/oidc-provider/server.mjs)
// started as a production process, what the harness sends it, and the checks that its answers
// mean what ours mean (a token issued, opaque; a live token introspected as active). Used by
// bench/run.ts (references peer-cc and peer-introspect) and bench/peer-pglite.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, type Server } from './processes';
import { BENCH_CLIENT } from './seed';

const ROOT = path.resolve(__dirname, '../..');

/** where the peer answers the requests of our scenarios 10 and 9 */
export const PEER_TOKEN_PATH = '/token';
export const PEER_INTROSPECTION_PATH = '/token/introspection';
/** ttl.ClientCredentials of the peer (server.mjs): its one non-default setting besides the features */
const PEER_TTL_SECONDS = 7200;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CLIENT_BASIC = { authorization: `Basic ${Buffer.from(`${BENCH_CLIENT.identifier}:${BENCH_CLIENT.secret}`).toString('base64')}` };

/** What a report says of the peer, so that anyone can start the same one. */
export interface PeerInfo {
  name: 'oidc-provider';
  version: string;
  node: string;
  ttlSeconds: number;
}

export function peerInfo(): PeerInfo {
  const { version } = JSON.parse(readFileSync(path.join(ROOT, 'node_modules/oidc-provider/package.json'), 'utf8')) as { version: string };
  return { name: 'oidc-provider', version, node: process.version, ttlSeconds: PEER_TTL_SECONDS };
}

/** The peer as a production process (NODE_ENV=production, same Node as the service), its client BENCH_CLIENT. */
export const startPeer = (): Promise<Server> => startServer('peer (oidc-provider)', path.join(ROOT, 'bench/peers/oidc-provider/server.mjs'), {});

async function post(peer: Server, p: string, body: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(`${peer.origin}${p}`, { method: 'POST', headers: { ...FORM, ...CLIENT_BASIC }, body: new URLSearchParams(body).toString() });
  const text = await res.text();
  if (!res.ok) throw new Error(`the peer answered POST ${p} with ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * `count` client_credentials tokens of the peer (scope read, as scenario 10 asks), each checked
 * opaque: a JWT (three dot-separated parts) would be introspected without a lookup.
 */
export async function issuePeerTokens(peer: Server, count: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = await post(peer, PEER_TOKEN_PATH, { grant_type: 'client_credentials', scope: 'read' });
    const token = body.access_token;
    if (typeof token !== 'string' || body.scope !== 'read' || body.expires_in !== PEER_TTL_SECONDS) throw new Error(`the peer issued no read token for ${PEER_TTL_SECONDS} s: ${JSON.stringify(body)}`);
    if (token.split('.').length === 3) throw new Error(`the peer issued a JWT, not an opaque token: ${token.slice(0, 40)}…`);
    tokens.push(token);
  }
  return tokens;
}

/**
 * Each token introspected as the harness's load does: active, the bench client's, scope read.
 * The peer's default in-memory adapter is an LRU of 1,000 to 2,000 entries: a token can be
 * forgotten long before its TTL (after a measurement of peer-cc, say), and an introspection of a
 * forgotten token is a quick 200 {"active":false}, which proves nothing.
 */
export async function checkPeerTokensActive(peer: Server, tokens: string[]): Promise<void> {
  for (const [i, token] of tokens.entries()) {
    const body = await post(peer, PEER_INTROSPECTION_PATH, { token });
    if (body.active !== true || body.client_id !== BENCH_CLIENT.identifier || body.scope !== 'read') {
      throw new Error(`the peer's introspection of its token ${i + 1} of ${tokens.length} answered ${JSON.stringify(body)}, not active`);
    }
  }
}

/** The configuration of the peer, in words, for the reports (bench/run.ts, bench/peer-pglite.ts). */
export function peerConfiguration(p: PeerInfo): string {
  return (
    `a **stock \`${p.name}\` ${p.version}** (panva's certified OpenID provider; \`bench/peers/oidc-provider/server.mjs\`, plain ESM, not compiled), ` +
    `Node ${p.node}, NODE_ENV=production, one process; a \`node:http\` server answers \`GET /healthz\` and hands every other request to \`provider.callback()\`. ` +
    `Configuration: issuer its own origin, \`proxy\` off, the **default in-memory adapter** (no \`adapter\`: an LRU of 1,000 to 2,000 entries in the process), ` +
    `\`features: { clientCredentials: { enabled: true }, introspection: { enabled: true }, devInteractions: { enabled: false } }\` ` +
    `(introspection's default \`allowedPolicy\`: a client that authenticates may introspect), \`scopes: ['read', 'write']\`, ` +
    `one client \`${BENCH_CLIENT.identifier}\` (the bench client's identifier and secret: the same Basic header as our scenarios) with ` +
    `\`token_endpoint_auth_method: 'client_secret_basic'\`, \`grant_types: ['client_credentials']\`, \`response_types: []\`, \`redirect_uris: []\`, \`scope: 'read write'\`; ` +
    `**opaque access tokens** (v9's default for client_credentials without resource indicators; checked at start: not a JWT); ` +
    `\`ttl.ClientCredentials\` ${p.ttlSeconds} s, its one non-default TTL (the default 600 s would expire introspected tokens within a run); ` +
    `a cookie key and an RS256 signing key generated at start (v9 would otherwise use its public development keys; nothing is signed here); ` +
    `Koa's printing of server errors off (\`provider.silent\`). **Stock: no tuning.** oidc-provider 9 names Node 22 or later as its supported runtime (it warns at start on Node 20).`
  );
}
