import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import type { Services } from '../../domain/services';
import type { Viewer } from '../../domain/auth/viewer';
import type { SignedInUserRecord } from '../../domain/directory/user.repository';
import { asDomainError, BadRequestError } from '../../domain/errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../../domain/crypto';
import { SESSION_SECONDS } from '../../domain/auth/sign-in-session.service';
import { namesApiToken } from '../../domain/auth/basic-login';
import { createHostResolver } from '../request-context';
import { acceptForms } from '../form-body';
import { errorPage } from './templates';
import { loginErrorFor, pageErrorFor } from './page-errors';

// The one session rule of every page under /oauth (the authorization pages,
// /oauth/logout, /oauth/authorized_apps): docs/api.md, "Sign-in sessions".
// The session cookie is signed and carries the account and a random value; the
// session itself is a row of oauth_sessions (its keyed hash), so that signing out
// ends it server-side. A session is live until it expires (15 minutes after the
// sign-in), until /oauth/logout, until its user's password changes or is reset,
// or until the user is deactivated; all are checked on every use. HttpOnly,
// SameSite=Lax, Secure behind https, Path=/oauth. Every form carries a CSRF
// token bound to a second cookie (HMAC of its random value). Pages are never framed.

const SESSION_COOKIE = 'hd_oauth_session';
const CSRF_COOKIE = 'hd_oauth_csrf';
const FORM_LIMIT = 16 * 1024;

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  // no script at all; inline CSS only; never in a frame (clickjacking of Allow, Revoke)
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function page(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

/** Who a live session is: the session's user, as the pages need them. */
export interface SignedIn {
  accountId: bigint;
  user: SignedInUserRecord;
}

/** Why a sign-in form was refused: what the form says, and its status. */
interface SignInRefusal {
  status: number;
  message: string;
}

export interface PageSessions {
  /** the host's base URL (the issuer) and account subdomain */
  resolveHost: ReturnType<typeof createHostResolver>;
  csrfFor(request: FastifyRequest, reply: FastifyReply): string;
  csrfValid(request: FastifyRequest, presented: unknown): boolean;
  /** the session's user while the session lives (of `accountId` when given); undefined otherwise */
  signedIn(request: FastifyRequest, accountId?: bigint): Promise<SignedIn | undefined>;
  /**
   * A sign-in form's post (CSRF token, email, password): checked as a Basic sign-in (the same
   * throttles, KDF queue and failure counting; on an account's host (`subdomain`) in that
   * account, else in the account the email and password name; never an API token), then a
   * session starts and its cookie is set. Of `accountId` only, when given. Undefined when
   * signed in; else what the form says (its headers, e.g. Retry-After, already set).
   */
  signIn(request: FastifyRequest, reply: FastifyReply, form: Record<string, unknown>, where: { subdomain: string | undefined; accountId?: bigint }): Promise<SignInRefusal | undefined>;
  /** ends the request's session server-side (a copy of the cookie is refused from now on) and clears the cookie */
  endSession(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

const WRONG: SignInRefusal = { status: 401, message: 'Wrong email or password.' };
const EXPIRED: SignInRefusal = { status: 403, message: 'Your session expired. Please sign in again.' };

/**
 * Sets up the pages' plugin (encapsulated: the cookie plugin, the form parser and
 * the error handler stay on its routes) and gives the session and CSRF helpers.
 */
export async function pageSessions(fastify: FastifyInstance, { services, hashKey, publicUrl }: { services: Services; hashKey: Buffer; publicUrl?: string }): Promise<PageSessions> {
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
    request.log.error({ err: error }, 'page error');
    return page(reply, 500, errorPage({ title: 'Something went wrong', message: 'Please try again later.' }));
  });
  const cookieOptions = (request: FastifyRequest) => ({ httpOnly: true, sameSite: 'lax' as const, secure: secure(request), path: '/oauth' });

  /** The session cookie's value when its signature holds. */
  const sessionValue = (request: FastifyRequest): string | undefined => {
    const raw = request.cookies[SESSION_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    return unsigned.valid && unsigned.value ? unsigned.value : undefined;
  };

  const csrfValid = (request: FastifyRequest, presented: unknown): boolean => {
    const value = request.cookies[CSRF_COOKIE];
    if (!value || typeof presented !== 'string') return false;
    return constantTimeEqual(presented, hmacHex(hashKey, `oauth-csrf\0${value}`));
  };

  return {
    resolveHost,
    csrfFor(request, reply) {
      let value = request.cookies[CSRF_COOKIE];
      if (!value || !/^[\w-]{43}$/.test(value)) {
        value = randomUrlSafe(32);
        reply.setCookie(CSRF_COOKIE, value, cookieOptions(request));
      }
      return hmacHex(hashKey, `oauth-csrf\0${value}`);
    },
    csrfValid,
    async signedIn(request, accountId) {
      const value = sessionValue(request);
      if (!value) return undefined;
      const session = await services.signInSessions.find(value);
      if (!session || (accountId !== undefined && session.accountId !== accountId)) return undefined;
      // the row's check covered active and the password epoch; the user is read for what the pages show
      const user = await services.users.findInAccount({ accountId: session.accountId }, session.userId);
      return user && user.active ? { accountId: session.accountId, user } : undefined;
    },
    async signIn(request, reply, form, { subdomain, accountId }) {
      if (!csrfValid(request, form.csrf_token)) return EXPIRED;
      const { email, password } = form;
      // "email/token" would sign in with an API token as the password: the pages take passwords only
      if (typeof email !== 'string' || typeof password !== 'string' || !email || !password || email.includes(':') || namesApiToken(email)) return WRONG;
      let viewer: Viewer | null;
      try {
        viewer = await services.authenticator.authenticate({
          authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`,
          address: request.ip,
          subdomain,
        });
      } catch (err) {
        const known = asDomainError(err);
        if (!known) throw err;
        const answer = loginErrorFor(known);
        reply.headers(answer.headers);
        return { status: answer.status, message: answer.message };
      }
      if (!viewer || viewer.via !== 'basic' || (accountId !== undefined && viewer.accountId !== accountId)) return WRONG;
      const value = await services.signInSessions.start(viewer);
      if (value === null) return WRONG;
      reply.setCookie(SESSION_COOKIE, value, { ...cookieOptions(request), signed: true, maxAge: SESSION_SECONDS });
      return undefined;
    },
    async endSession(request, reply) {
      const value = sessionValue(request);
      if (value) await services.signInSessions.end(value);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    },
  };
}
