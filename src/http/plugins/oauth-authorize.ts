import type { FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import type { Services } from '../../domain/services';
import type { Viewer } from '../../domain/auth/viewer';
import { asDomainError, BadRequestError } from '../../domain/errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../../domain/crypto';
import { describeScope } from '../../domain/scopes';
import { authorizationResponseUrl, type AuthorizationRequest } from '../../domain/oauth-server/oauth-server.service';
import { createHostResolver } from '../request-context';
import { acceptForms } from '../form-body';
import { consentPage, errorPage, loginPage } from '../pages/templates';
import { loginErrorFor, pageErrorFor } from '../pages/page-errors';

// The authorization endpoint (RFC 6749 §4.1.1) as people see it: a login page,
// then a consent page, then the redirect back to the application with a code.
//   GET  /oauth/authorizations/new   the request is checked (services.oauthServer),
//                                    then login or consent is shown
//   POST /oauth/authorizations/login email + password (the Basic throttle and KDF
//                                    queue apply), then back to GET …/new
//   POST /oauth/authorizations       Allow → code; Deny → access_denied
// The session is a signed cookie (the user, the account, an expiry, and the
// user's password_changed_at when it began: a password change or reset ends every
// earlier session, as deactivation does; both are checked on use), HttpOnly,
// SameSite=Lax, Secure behind https, Path=/oauth. Every form carries a CSRF token
// bound to a second cookie (HMAC of its random value). Pages are never framed.

const BASE = '/oauth/authorizations';
const SESSION_COOKIE = 'hd_oauth_session';
const CSRF_COOKIE = 'hd_oauth_csrf';
const SESSION_SECONDS = 15 * 60;
/** the authorization request's parameters, carried through the forms */
const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;
const FORM_LIMIT = 16 * 1024;

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  // no script at all; inline CSS only; never in a frame (clickjacking of Allow)
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Sessions begun before the user's last password change are over: that change is their epoch. */
const sessionEpochOf = (user: { passwordChangedAt: Date }) => user.passwordChangedAt.getTime();

interface Session {
  userId: bigint;
  accountId: bigint;
  /**
   * The session's epoch: the user's last password change (ms) when the session began. A
   * session of an earlier epoch is over. Not a secret (a time, in a cookie whose signature
   * was checked in constant time), so it is compared as a number.
   */
  epoch: number;
}

export interface AuthorizePagesOptions {
  services: Services;
  hashKey: Buffer;
  publicUrl?: string;
}

function page(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

function requestParams(source: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of REQUEST_PARAMS) {
    const v = source[name];
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v)) out[name] = v as never; // repeated: the check refuses it
  }
  return out;
}

/** Encapsulated (not fastify-plugin): the form parser and the cookie plugin stay inside these routes. */
export async function authorizePages(fastify: import('fastify').FastifyInstance, { services, hashKey, publicUrl }: AuthorizePagesOptions) {
  // the issuer (RFC 9207 iss) is the base URL the request came on, as in the metadata
  const resolveHost = createHostResolver(publicUrl);
  await fastify.register(cookie, { secret: hashKey.toString('hex') });
  acceptForms(fastify, (message) => new BadRequestError(message), FORM_LIMIT);

  // Secure behind https: served over TLS, or published at an https PUBLIC_URL (TLS ends at a proxy)
  const secure = (request: FastifyRequest) => request.protocol === 'https' || publicUrl?.startsWith('https:') === true;
  // A person reads these answers: errors are pages too, never JSON or a stack.
  fastify.setErrorHandler((error, request, reply) => {
    const known = asDomainError(error);
    if (known) {
      const answer = pageErrorFor(known);
      return page(reply.headers(answer.headers), answer.status, errorPage(answer));
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return page(reply, 400, errorPage({ title: 'This request cannot be authorized', message: 'The request is malformed.' }));
    }
    request.log.error({ err: error }, 'authorization page error');
    return page(reply, 500, errorPage({ title: 'Something went wrong', message: 'Please try again later.' }));
  });
  const cookieOptions = (request: FastifyRequest) => ({ httpOnly: true, sameSite: 'lax' as const, secure: secure(request), path: '/oauth' });

  function csrfFor(request: FastifyRequest, reply: FastifyReply): string {
    let value = request.cookies[CSRF_COOKIE];
    if (!value || !/^[\w-]{43}$/.test(value)) {
      value = randomUrlSafe(32);
      reply.setCookie(CSRF_COOKIE, value, cookieOptions(request));
    }
    return hmacHex(hashKey, `oauth-csrf\0${value}`);
  }

  function csrfValid(request: FastifyRequest, presented: unknown): boolean {
    const value = request.cookies[CSRF_COOKIE];
    if (!value || typeof presented !== 'string') return false;
    return constantTimeEqual(presented, hmacHex(hashKey, `oauth-csrf\0${value}`));
  }

  function session(request: FastifyRequest): Session | undefined {
    const raw = request.cookies[SESSION_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || !unsigned.value) return undefined;
    const m = /^(\d{1,19})\.(\d{1,19})\.(\d{1,12})\.(\d{1,15})$/.exec(unsigned.value);
    if (!m || Number(m[3]) * 1000 < Date.now()) return undefined;
    return { userId: BigInt(m[1]), accountId: BigInt(m[2]), epoch: Number(m[4]) };
  }

  /** The session's user while the session lives: active, and on the password the session began with. */
  async function sessionUser(who: Session) {
    const user = await services.users.findInAccount({ accountId: who.accountId }, who.userId);
    return user && user.active && sessionEpochOf(user) === who.epoch ? user : undefined;
  }

  function startSession(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, user: { passwordChangedAt: Date }) {
    const exp = Math.floor(Date.now() / 1000) + SESSION_SECONDS;
    const value = `${viewer.userId}.${viewer.accountId}.${exp}.${sessionEpochOf(user)}`;
    reply.setCookie(SESSION_COOKIE, value, { ...cookieOptions(request), signed: true, maxAge: SESSION_SECONDS });
  }

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

  /**
   * Sends the consent page and says so; false (nothing sent) when the session's
   * user is gone, inactive, or has a new password since the session began. Never
   * return the reply itself from here: it is a thenable, and awaiting it gives
   * undefined, which sent the login page after the consent page.
   */
  async function showConsent(request: FastifyRequest, reply: FastifyReply, req: AuthorizationRequest, params: Record<string, string>, who: Session): Promise<boolean> {
    const user = await sessionUser(who);
    if (!user) return false;
    page(
      reply,
      200,
      consentPage({
        clientName: req.client.name, company: req.client.company, userEmail: user.email, scopes: req.scope.map(describeScope),
        action: BASE, csrf: csrfFor(request, reply), request: params,
      }),
    );
    return true;
  }

  fastify.get(`${BASE}/new`, async (request, reply) => {
    const params = requestParams(request.query as Record<string, unknown>);
    const req = await check(request, reply, params);
    if (!req) return reply;
    const who = session(request);
    if (who && who.accountId === req.client.accountId && (await showConsent(request, reply, req, params, who))) return reply;
    return page(reply, 200, loginPage({ clientName: req.client.name, action: `${BASE}/login`, csrf: csrfFor(request, reply), request: params }));
  });

  fastify.post(`${BASE}/login`, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = requestParams(body);
    const req = await check(request, reply, params);
    if (!req) return reply;
    const again = (status: number, error: string) =>
      page(reply, status, loginPage({
        clientName: req.client.name, action: `${BASE}/login`, csrf: csrfFor(request, reply), request: params, error,
        email: typeof body.email === 'string' ? body.email : undefined,
      }));
    if (!csrfValid(request, body.csrf_token)) return again(403, 'Your session expired. Please sign in again.');
    const email = typeof body.email === 'string' ? body.email : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (!email || !password || email.includes(':')) return again(401, 'Wrong email or password.');
    let viewer: Viewer | null;
    try {
      // as a Basic request on the client's account's subdomain: the same throttles, KDF queue and one verification
      const account = await services.accounts.find({ accountId: req.client.accountId });
      viewer = await services.authenticator.authenticate({
        authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`,
        address: request.ip,
        subdomain: account?.subdomain,
      });
    } catch (err) {
      const known = asDomainError(err);
      if (!known) throw err;
      const answer = loginErrorFor(known);
      reply.headers(answer.headers);
      return again(answer.status, answer.message);
    }
    if (!viewer || viewer.accountId !== req.client.accountId) return again(401, 'Wrong email or password.');
    const user = await services.users.findInAccount({ accountId: viewer.accountId }, viewer.userId);
    if (!user) return again(401, 'Wrong email or password.');
    startSession(request, reply, viewer, user);
    return reply.redirect(`${BASE}/new?${new URLSearchParams(params).toString()}`, 303);
  });

  fastify.post(BASE, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const params = requestParams(body);
    const req = await check(request, reply, params);
    if (!req) return reply;
    const signedIn = session(request);
    const who = signedIn && signedIn.accountId === req.client.accountId && (await sessionUser(signedIn)) ? signedIn : undefined;
    if (!csrfValid(request, body.csrf_token) || !who) {
      return page(reply, 200, loginPage({ clientName: req.client.name, action: `${BASE}/login`, csrf: csrfFor(request, reply), request: params, error: 'Your session expired. Please sign in again.' }));
    }
    const { baseUrl } = resolveHost(request);
    const back = (response: Record<string, string | undefined>) =>
      reply.redirect(authorizationResponseUrl(req.redirectUri, { ...response, state: req.state, iss: baseUrl }), 303);
    if (body.decision !== 'allow') return back({ error: 'access_denied', error_description: 'The user denied the request' });
    try {
      const { code } = await services.oauthServer.issueAuthorizationCode({ ...req, user: who });
      return back({ code });
    } catch (err) {
      const json = (err as { toJSON?: () => Record<string, string> }).toJSON?.();
      if (json) return back(json);
      throw err;
    }
  });
}
