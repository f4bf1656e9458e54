import { isDeepStrictEqual } from 'node:util';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { oauthServerPaths } from '../oauth-server.openapi';

/** Where the document is served, and the UI that shows it. */
export const OPENAPI_PATH = '/api/v2/openapi.json';
const API_DOCS_PATH = '/api/docs';

type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { paths: Record<string, Record<string, Json>>; components: Json };

const DESCRIPTION = `The help desk's REST API in Zendesk's shapes (OAuth clients, OAuth tokens, voice callback
requests), and its OAuth 2.0 authorization server. The contract is docs/api.md; this document is
generated from the routes' schemas (docs/openapi.json is the committed copy).

- Every /api/v2 route also answers with a \`.json\` suffix (\`/api/v2/oauth/clients.json\`,
  \`/api/v2/oauth/clients/1.json\`); the variants are not listed separately.
- Authenticate with Basic (email:password) or Bearer (an OAuth access token). On an account's
  subdomain (\`{subdomain}.<host>\`) a request acts in that account only.
- Errors use Zendesk's envelope: \`{"error": "…", "description": "…"}\`, and 422 adds
  \`details\` by field. Unknown and read-only body fields are ignored.`;

/** The document's frame: @fastify/swagger adds a path for every route with a schema. */
function frame(version: string) {
  return {
    openapi: '3.1.0',
    info: { title: 'Help desk API', version, description: DESCRIPTION },
    servers: [{ url: '/', description: 'This server (PUBLIC_URL, or the host the request came on)' }],
    tags: [
      { name: 'OAuth clients', description: 'Applications registered to get access (admins)' },
      { name: 'OAuth tokens', description: 'Access tokens: list and create (admins), show and revoke' },
      { name: 'Authorized apps', description: 'The apps you allowed and the tokens issued to you: everyone lists and revokes their own' },
      { name: 'Voice callback requests', description: "A caller keeps a place in a phone number's queue (agents, admins)" },
      { name: 'Users', description: "The account's users (admins); everyone reads themselves and changes their own password" },
      { name: 'Groups', description: 'Groups of agents callbacks route to (agents read, admins write)' },
      { name: 'Group memberships', description: 'Which agents each group routes to (agents read, admins write)' },
      { name: 'Voice phone numbers', description: "The account's voice lines (agents read, admins write)" },
      { name: 'Account settings', description: 'Omnichannel routing (admins)' },
      { name: 'Audit logs', description: 'Every change, who made it and how (admins; the auditlogs scope)' },
      { name: 'OAuth 2.0 authorization server', description: 'Outside /api/v2, as Zendesk has it; errors as RFC 6749 §5.2' },
    ],
    paths: {},
    components: {
      securitySchemes: {
        basic: { type: 'http', scheme: 'basic', description: "A user's email and password" },
        bearer: { type: 'http', scheme: 'bearer', description: 'An OAuth access token' },
        oauthClient: { type: 'http', scheme: 'basic', description: 'OAuth client authentication: client_id and client_secret, form-urlencoded first (RFC 6749 §2.3.1), or in the body' },
      },
    },
    security: [{ basic: [] }, { bearer: [] }],
  };
}

/**
 * What @fastify/swagger generates, made tidier and complete:
 *  - request bodies are optional (an empty body counts as none) and DELETE takes none;
 *  - a titled schema (OAuthClient, OAuthToken, …) is kept once in components.schemas;
 *  - the error answers, the same on every route, are kept once in components.responses;
 *  - the OAuth 2.0 endpoints outside /api/v2 are added (src/http/oauth-server.openapi.ts).
 */
function finishDocument(generated: Json): OpenApiDocument {
  const doc = JSON.parse(JSON.stringify(generated)) as OpenApiDocument;
  const schemas: Record<string, Json> = {};
  const responses: Record<string, Json> = {};
  Object.assign(doc.paths, JSON.parse(JSON.stringify(oauthServerPaths)));

  const hoist = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(hoist);
    if (!node || typeof node !== 'object') return node;
    const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, hoist(v)])) as Json;
    const title = out.title;
    if (typeof title !== 'string') return out;
    // (@fastify/swagger moves the `examples` of a response's own schema to its media type)
    const { examples: _examples, ...shape } = out;
    const known = schemas[title];
    if (known) {
      const { examples: _knownExamples, ...knownShape } = known;
      if (!isDeepStrictEqual(knownShape, shape)) throw new Error(`two different schemas are titled ${title}`);
    }
    if (!known?.examples) schemas[title] = out;
    return { $ref: `#/components/schemas/${title}` };
  };

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = operation.requestBody as Json | undefined;
      if (body && path.startsWith('/api/v2/')) {
        if (method === 'delete') delete operation.requestBody;
        else body.required = false;
      }
      operation.responses = hoist(operation.responses) as Json;
      if (operation.requestBody) operation.requestBody = hoist(operation.requestBody);
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const error = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema as Json | undefined;
        const code = ((error?.properties as Json | undefined)?.error as Json | undefined)?.const;
        const name = status === '401' ? 'Unauthenticated' : code;
        if (Number(status) < 400 || typeof name !== 'string' || !/^[A-Za-z]+$/.test(name)) continue;
        responses[name] ??= response;
        if (isDeepStrictEqual(responses[name], response)) (operation.responses as Json)[status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  doc.components = { ...doc.components, schemas: { ...(doc.components.schemas as Json), ...schemas }, responses };
  return doc;
}

/**
 * The OpenAPI 3.1 document of the routes registered after it (register it first): the
 * REST routes' schemas (src/rest), plus the OAuth 2.0 endpoints.
 */
export const openapi = fp<{ version: string }>(
  async (fastify, { version }) => {
    await fastify.register(swagger, {
      // (typed loosely: openapi-types' unions are not worth spelling out for a literal)
      openapi: frame(version) as never,
      convertConstToEnum: false,
      // routes without tags (GraphQL, health, the authorization pages, the OAuth endpoints' own routes) are not in it
      hideUntagged: true,
      transformObject: (generated) => finishDocument((generated as { openapiObject: Json }).openapiObject) as never,
    });
  },
  { name: 'openapi' },
);

/** The top bar's logo: the product's name rather than the UI package's. */
const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="220" height="40" viewBox="0 0 220 40"><text x="0" y="28" font-family="sans-serif" font-size="24" font-weight="700" fill="#ffffff">Help desk API</text></svg>`;

/** GET /api/v2/openapi.json, and Swagger UI at /api/docs (served from the package: no CDN). No authentication. */
export async function apiDocs(fastify: FastifyInstance): Promise<void> {
  fastify.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(fastify.swagger()));
  await fastify.register(swaggerUi, {
    routePrefix: API_DOCS_PATH,
    // the UI loads the document from urls (its own ./json would be the same document)
    uiConfig: { urls: [{ url: OPENAPI_PATH, name: 'Help desk API (/api/v2/openapi.json)' }], deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0 },
    theme: { title: 'Help desk API' },
    logo: { type: 'image/svg+xml', content: LOGO, href: API_DOCS_PATH, target: '_self' },
  });
}
