import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../domain/services';
import { describeScope } from '../../domain/scopes';
import { authorizationResponseUrl, type AuthorizationRequest } from '../../domain/oauth-server/oauth-server.service';
import { consentPage, errorPage, loginPage } from '../pages/templates';
import { page, type PageSessions, type SignedIn } from '../pages/page-session';

// The authorization endpoint (RFC 6749 §4.1.1) as people see it: a login page,
// then a consent page, then the redirect back to the application with a code.
//   GET  /oauth/authorizations/new   the request is checked (services.oauthServer),
//                                    then login or consent is shown; when the user
//                                    already allowed these scopes to this client
//                                    (remembered consent), straight back with a code
//   POST /oauth/authorizations/login email + password (the Basic throttle and KDF
//                                    queue apply), then back to GET …/new
//   POST /oauth/authorizations       Allow → code; Deny → access_denied
// The session and CSRF rules are those of every page under /oauth (pages/page-session.ts).

const BASE = '/oauth/authorizations';
/** the authorization request's parameters, carried through the forms */
const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

function requestParams(source: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REQUEST_PARAMS) {
    const v = source[name];
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v)) out[name] = v as never; // repeated: the check refuses it
  }
  return out;
}

/** The authorization pages' routes, on the pages' plugin (plugins/oauth-pages.ts). */
export function authorizeRoutes(fastify: FastifyInstance, services: Services, kit: PageSessions) {
  const { resolveHost } = kit;

  /** The checked request, or the answer already sent (error page or redirect with an error). */
  async function check(request: FastifyRequest, reply: FastifyReply, params: Record<string, string>): Promise<AuthorizationRequest | undefined> {
    // on an account's host, a client of another account is unknown
    const result = await services.oauthServer.validateAuthorizationRequest(params, resolveHost(request).subdomain);
    if (result.ok) return result.request;
    if (result.show === 'page') {
      await page(reply, 400, errorPage({ title: 'This request cannot be authorized', message: result.error.message }));
      return undefined;
    }
    await reply.redirect(authorizationResponseUrl(result.redirectUri, { ...result.error.toJSON(), state: result.state, iss: resolveHost(request).baseUrl }), 302);
    return undefined;
  }

  /** Back to the application: the response (a code, or an error) with the request's state and the issuer. */
  const back = (request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, response: Record<string, string | undefined>, status: 302 | 303) =>
    reply.redirect(authorizationResponseUrl(req.redirectUri, { ...response, state: req.state, iss: resolveHost(request).baseUrl }), status);

  /** A code for the signed-in user (remembered: only if they allowed it before; null then means ask), or the protocol error as a response. */
  async function codeFor(req: AuthorizationRequest, who: SignedIn, remembered: boolean): Promise<Record<string, string> | null> {
    const input = { ...req, user: { accountId: who.accountId, userId: who.user.id } };
    try {
      if (!remembered) return { code: (await services.oauthServer.issueAuthorizationCode(input)).code };
      const issued = await services.oauthServer.rememberedAuthorizationCode(input);
      return issued && { code: issued.code };
    } catch (err) {
      const json = (err as { toJSON?: () => Record<string, string> }).toJSON?.();
      if (json) return json;
      throw err;
    }
  }

  const showLogin = (request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, params: Record<string, string>, status = 200, error?: string, email?: string) =>
    page(reply, status, loginPage({ clientName: req.client.name, action: `${BASE}/login`, csrf: kit.csrfFor(request, reply), request: params, error, email }));

  fastify.get(`${BASE}/new`, async (request, reply) => {
    const params = requestParams(request.query as Record<string, unknown>);
    const req = await check(request, reply, params);
    if (!req) return reply;
    const who = await kit.signedIn(request, req.client.accountId);
    if (!who) return showLogin(request, reply, req, params);
    // remembered consent: allowed before for every scope asked, grant not revoked
    const remembered = await codeFor(req, who, true);
    if (remembered) return back(request, reply, req, remembered, 302);
    return page(
      reply,
      200,
      consentPage({
        clientName: req.client.name, company: req.client.company, userEmail: who.user.email, scopes: req.scope.map(describeScope),
        action: BASE, csrf: kit.csrfFor(request, reply), request: params,
      }),
    );
  });

  fastify.post(`${BASE}/login`, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = requestParams(body);
    const req = await check(request, reply, params);
    if (!req) return reply;
    // as a Basic request on the client's account's subdomain: the same throttles, KDF queue and one verification
    const account = await services.accounts.find({ accountId: req.client.accountId });
    const refusal = await kit.signIn(request, reply, body, { subdomain: account?.subdomain, accountId: req.client.accountId });
    if (refusal) return showLogin(request, reply, req, params, refusal.status, refusal.message, typeof body.email === 'string' ? body.email : undefined);
    return reply.redirect(`${BASE}/new?${new URLSearchParams(params).toString()}`, 303);
  });

  fastify.post(BASE, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = requestParams(body);
    const req = await check(request, reply, params);
    if (!req) return reply;
    const who = await kit.signedIn(request, req.client.accountId);
    if (!kit.csrfValid(request, body.csrf_token) || !who) return showLogin(request, reply, req, params, 200, 'Your session expired. Please sign in again.');
    if (body.decision !== 'allow') return back(request, reply, req, { error: 'access_denied', error_description: 'The user denied the request' }, 303);
    return back(request, reply, req, (await codeFor(req, who, false))!, 303);
  });
}
