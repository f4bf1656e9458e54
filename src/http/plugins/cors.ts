import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { OAUTH_PATHS } from '../../domain/oauth-server/metadata';

// CORS for browser dashboards on other origins (docs/api.md, "CORS"), with @fastify/cors,
// registered only when CORS_ORIGINS lists origins: without it no answer carries a CORS header.
// Decisions:
//  - exact origins only (config.ts validates them), reflected one at a time: never `*`;
//  - no credentials: the APIs authenticate with the Authorization header, never with
//    cookies, so Access-Control-Allow-Credentials is never sent (a page's cookies for this
//    host are not sent cross-origin, and the sign-in cookie of the authorization pages is
//    useless to another origin);
//  - only the APIs a page calls with a token: /graphql, /api/v2/…, and the grant and
//    revocation endpoints with the server's metadata (a single-page app using the code flow
//    with PKCE discovers the endpoints, redeems its code and revokes its tokens from the
//    browser). Never the authorization pages (a person signs
//    in and consents there, top-level, not from another origin's script), /oauth/introspect
//    (resource servers call it, server to server), /metrics or the health checks.

/** What each part allows: the methods of its routes and the request headers its clients send. */
const BASE_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'];
const SCOPES = {
  rest: { methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], headers: [...BASE_HEADERS, 'X-On-Behalf-Of'] },
  // Apollo's CSRF prevention asks GET queries (and non-JSON POSTs) for one of its headers
  graphql: { methods: ['GET', 'POST'], headers: [...BASE_HEADERS, 'X-On-Behalf-Of', 'Apollo-Require-Preflight', 'X-Apollo-Operation-Name'] },
  oauth: { methods: ['POST'], headers: BASE_HEADERS },
  discovery: { methods: ['GET'], headers: BASE_HEADERS },
} as const;

/** Answer headers a page may read besides the safelisted ones: the rate-limit budget, Retry-After, Location of a created record, the request id, the 401 challenge. */
const EXPOSED = ['X-Rate-Limit', 'X-Rate-Limit-Remaining', 'Retry-After', 'Location', 'X-Request-Id', 'WWW-Authenticate'];

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The OAuth server's endpoints a browser app calls: the grant and revocation endpoints, and the metadata document. */
const OAUTH_SCOPES = new Map<string, keyof typeof SCOPES>([
  [OAUTH_PATHS.token, 'oauth'],
  [OAUTH_PATHS.revocation, 'oauth'],
  [OAUTH_PATHS.metadata, 'discovery'],
]);

function scopeOf(url: string): keyof typeof SCOPES | undefined {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.startsWith('/api/v2/')) return 'rest';
  if (path === '/graphql') return 'graphql';
  return OAUTH_SCOPES.get(path);
}

type Options = FastifyCorsOptions;

/** @fastify/cors for the listed origins on the API routes; everything else passes untouched. */
export const corsForOrigins = fp<{ origins: string[] }>(async (fastify, { origins }) => {
  const listed = new Set(origins);
  const none: Options = { origin: false };
  // for each scope: a preflight's answer, and any other request's (an OPTIONS without
  // Access-Control-Request-Method is no preflight: it goes on to its route, a 404 in the envelope)
  const allowed = Object.fromEntries(
    Object.entries(SCOPES).map(([scope, { methods, headers }]) => {
      const common: Options = { origin: true, credentials: false, exposedHeaders: EXPOSED, methods: [...methods], allowedHeaders: [...headers], maxAge: PREFLIGHT_MAX_AGE_SECONDS };
      return [scope, { preflight: common, other: { ...common, preflight: false } }];
    }),
  ) as Record<keyof typeof SCOPES, { preflight: Options; other: Options }>;
  const optionsFor = (request: FastifyRequest): Options => {
    const origin = request.headers.origin;
    if (origin === undefined || !listed.has(origin)) return none;
    const scope = scopeOf(request.url);
    if (scope === undefined) return none;
    return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined ? allowed[scope].preflight : allowed[scope].other;
  };
  await fastify.register(cors, { hook: 'onRequest', delegator: (request, callback) => callback(null, optionsFor(request)) });
}, { name: 'cors-for-origins' });
