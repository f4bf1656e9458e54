// The peer of issue 26: a stock oidc-provider v9 (panva's certified OpenID provider), for
// `npm run bench` (bench/run.ts, references peer-cc and peer-introspect; bench/peer-pglite.ts).
// Plain ESM, not compiled. Started by bench/processes.ts startServer(): PORT, HOST and
// PUBLIC_URL from the environment, NODE_ENV=production; it answers GET /healthz itself and
// hands every other request to the provider, unchanged.
//
// Configuration (stock: nothing tuned): the default in-memory adapter (no `adapter`), proxy
// off, issuer PUBLIC_URL; client_credentials and introspection on, dev interactions off;
// scopes read and write; one confidential client authenticating with client_secret_basic;
// the only non-default TTL is ClientCredentials, 7200 s (the default 600 s would expire the
// introspected tokens within a full run). v9 boots without cookie keys or signing keys (it
// then uses its public development keys, with a warning; opaque client_credentials tokens are
// not signed anyway): both are generated at start instead (random cookie key, RSA-2048 jwks).
//
//   PORT=3001 PUBLIC_URL=http://127.0.0.1:3001 node bench/peers/oidc-provider/server.mjs
//   curl -u bench-client:bench-client-secret $PUBLIC_URL/token -d grant_type=client_credentials -d scope=read
//   curl -u bench-client:bench-client-secret $PUBLIC_URL/token/introspection -d token=…
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '127.0.0.1';
const issuer = process.env.PUBLIC_URL ?? `http://${host}:${port}`;
// the bench's client (bench/seed.ts BENCH_CLIENT), so the harness sends the same Basic header to both
const client = { client_id: 'bench-client', client_secret: 'bench-client-secret' };

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

const provider = new Provider(issuer, {
  clients: [{
    ...client,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'read write',
  }],
  scopes: ['read', 'write'],
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    devInteractions: { enabled: false },
  },
  ttl: { ClientCredentials: 7200 },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256', kid: 'bench' }] },
});

// The provider is a Koa app: Koa prints each server error it meets on stderr (under load, a
// connection reset by the load generator's end); the answers are unchanged, only the printing goes.
provider.silent = true;

const handle = provider.callback();
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  handle(req, res);
});
server.listen(port, host);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
