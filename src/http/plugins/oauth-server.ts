import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asDomainError } from '../../domain/errors';
import type { Services } from '../../domain/services';
import { InvalidClientError, InvalidRequestError, OAuthError, oauthErrorFor, ServerError } from '../../domain/oauth-server/oauth-errors';
import { OAUTH_PATHS } from '../../domain/oauth-server/metadata';
import type { ProtocolRequest } from '../../domain/oauth-server/client-authentication';
import type { Params } from '../../domain/oauth-server/params';
import { createHostResolver } from '../request-context';
import { acceptForms } from '../form-body';

/** Nothing the grant, revocation and introspection endpoints answer may be cached (RFC 6749 §5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

function protocolRequest(request: FastifyRequest, subdomain: string | undefined): ProtocolRequest {
  const body = request.body;
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw new InvalidRequestError('The request body must be a form (application/x-www-form-urlencoded) or a JSON object');
  }
  const authorization = request.headers.authorization;
  return {
    authorization: Array.isArray(authorization) ? authorization[0] : authorization,
    params: (body as Params | undefined) ?? {},
    // Fastify's request.ip: the peer's address, or the client a trusted proxy (TRUST_PROXY) forwards
    origin: { via: 'oauth', requestId: String(request.id), ipAddress: request.ip },
    subdomain,
  };
}

/** Any error as RFC 6749 §5.2 JSON: client mistakes are 4xx, never 500 (a 5xx hides its message). */
function toOAuthError(error: unknown, request: FastifyRequest): OAuthError {
  if (error instanceof OAuthError) return error;
  const domain = asDomainError(error);
  const mapped = domain && oauthErrorFor(domain);
  if (mapped) return mapped;
  const e = error as { code?: string; statusCode?: number };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return Object.assign(new InvalidRequestError('The request body is too large'), { status: 413 });
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new InvalidRequestError('Send parameters as application/x-www-form-urlencoded or application/json');
  if (!domain && e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return new InvalidRequestError('The request body is malformed');
  request.log.error({ err: error }, 'oauth endpoint error');
  return new ServerError('Internal error');
}

function sendOAuthError(reply: FastifyReply, error: OAuthError) {
  reply.headers(NO_STORE);
  if (error instanceof InvalidClientError && error.viaBasic) reply.header('www-authenticate', 'Basic realm="oauth", error="invalid_client"');
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toJSON());
}

/**
 * The OAuth 2.0 authorization server's endpoints (docs/api.md, "OAuth 2.0 authorization
 * server"). Registered without fastify-plugin on purpose: the form parser and the
 * RFC 6749 error handler apply to these routes only, and the rest of the service
 * stays JSON-only. Handlers only translate; the work is in domain/oauth-server.
 */
export async function oauthServer(fastify: FastifyInstance, { services, publicUrl }: { services: Services; publicUrl?: string }): Promise<void> {
  acceptForms(fastify, (message) => new InvalidRequestError(message));
  fastify.setErrorHandler((error, request, reply) => sendOAuthError(reply, toOAuthError(error, request)));
  const server = services.oauthServer;
  // the issuer is the base URL the request came on (PUBLIC_URL, or with a subdomain), as for every other URL
  const resolveHost = createHostResolver(publicUrl);
  // on an account's host, only that account's clients are known (docs/api.md "Accounts and hosts")
  const protocol = (request: FastifyRequest) => protocolRequest(request, resolveHost(request).subdomain);

  fastify.post(OAUTH_PATHS.token, async (request, reply) => {
    const body = await server.token(protocol(request));
    return reply.headers(NO_STORE).type('application/json; charset=utf-8').send(body);
  });
  fastify.post(OAUTH_PATHS.revocation, async (request, reply) => {
    await server.revoke(protocol(request));
    return reply.headers(NO_STORE).code(200).send();
  });
  fastify.post(OAUTH_PATHS.introspection, async (request, reply) => {
    const body = await server.introspect(protocol(request));
    return reply.headers(NO_STORE).type('application/json; charset=utf-8').send(body);
  });
  fastify.get(OAUTH_PATHS.metadata, async (request, reply) => {
    return reply.type('application/json; charset=utf-8').send(server.metadata(resolveHost(request).baseUrl));
  });
}
