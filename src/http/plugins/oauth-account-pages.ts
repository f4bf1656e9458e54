import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../domain/services';
import type { Viewer } from '../../domain/auth/viewer';
import { describeScope } from '../../domain/scopes';
import { NotFoundError } from '../../domain/errors';
import { authorizedAppsPage, errorPage, loginPage, signedOutPage, signOutPage } from '../pages/templates';
import { page, type PageSessions, type SignedIn } from '../pages/page-session';

// The pages of a person's own sign-in (docs/api.md, "Your authorized apps" and "Sign-in sessions"):
//   GET  /oauth/authorized_apps         signed in: the apps the person allowed, a Revoke button each,
//                                       Sign out; else the sign-in form
//   POST /oauth/authorized_apps/login   email + password (the Basic throttles and KDF queue), then back
//   POST /oauth/authorized_apps/revoke  one entry (CSRF), then back to the list
//   GET  /oauth/logout                  the Sign out button (CSRF-protected form)
//   POST /oauth/logout                  ends the session server-side, clears the cookie: "You are
//                                       signed out", or a redirect to a same-origin return_to path
// On an account's host (subdomain) only that account's sessions count and its users sign in; on the
// plain host the account is the one the email and password name, as a Basic sign-in.

const APPS = '/oauth/authorized_apps';
const LOGOUT = '/oauth/logout';
const EXPIRED = 'Your session expired. Please sign in again.';
const NOTICES = new Map([
  ['signed_out', 'You are signed out.'],
  ['revoked', 'The app’s access was revoked.'],
]);

/**
 * A return_to that stays on this site: a path ("/…", not "//…" nor "/\…", which browsers
 * read as another host), of printable ASCII; undefined otherwise (no open redirect).
 */
function sameOriginPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048 || !/^\/(?![/\\])[\x21-\x7e]*$/.test(value) || value.includes('\\')) return undefined;
  // whatever the browser resolves it against, it stays there
  const base = 'https://same-origin.invalid';
  return new URL(value, base).origin === base ? value : undefined;
}

export function accountPagesRoutes(fastify: FastifyInstance, services: Services, kit: PageSessions) {
  /** The account of an account's host (its subdomain), or undefined on the plain host. */
  const hostSubdomain = (request: FastifyRequest) => kit.resolveHost(request).subdomain;

  /** The live session of this request, and on an account's host only one of that account. */
  async function signedInHere(request: FastifyRequest): Promise<SignedIn | undefined> {
    const who = await kit.signedIn(request);
    const subdomain = hostSubdomain(request);
    if (!who || subdomain === undefined) return who;
    const account = await services.accounts.find({ accountId: who.accountId });
    return account?.subdomain === subdomain ? who : undefined;
  }

  const viewerOf = (request: FastifyRequest, who: SignedIn): Viewer => ({
    accountId: who.accountId, userId: who.user.id, role: who.user.role, email: who.user.email, name: who.user.name, via: 'basic',
    origin: { via: 'oauth', requestId: String(request.id), ipAddress: request.ip },
  });

  const showLogin = (request: FastifyRequest, reply: FastifyReply, status = 200, error?: string, email?: string, notice?: string) =>
    page(reply, status, loginPage({
      purpose: 'to see and revoke the apps you allowed to access your account', action: `${APPS}/login`, csrf: kit.csrfFor(request, reply), request: {},
      error, email, notice,
    }));

  const problem = (reply: FastifyReply, status: number, message: string) =>
    page(reply, status, errorPage({ title: 'This request cannot be completed', message, footer: 'You can go back and try again, or close this page.' }));
  const refused = (reply: FastifyReply) => problem(reply, 403, 'The form expired or did not come from this site. Nothing was changed.');

  fastify.get(APPS, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const notice = typeof query.notice === 'string' ? NOTICES.get(query.notice) : undefined;
    const who = await signedInHere(request);
    if (!who) return showLogin(request, reply, 200, undefined, undefined, notice);
    const apps = await services.authorizedApps.list(viewerOf(request, who));
    return page(reply, 200, authorizedAppsPage({
      userEmail: who.user.email, csrf: kit.csrfFor(request, reply), revokeAction: `${APPS}/revoke`, signOutAction: LOGOUT, returnTo: `${APPS}?notice=signed_out`, notice,
      apps: apps.map((app) => ({
        id: app.id, name: app.client.name, company: app.client.company, scopes: app.scopes.map(describeScope), grantedAt: app.grantedAt, lastUsedAt: app.lastUsedAt,
      })),
    }));
  });

  fastify.post(`${APPS}/login`, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const refusal = await kit.signIn(request, reply, body, { subdomain: hostSubdomain(request) });
    if (refusal) return showLogin(request, reply, refusal.status, refusal.message, typeof body.email === 'string' ? body.email : undefined);
    return reply.redirect(APPS, 303);
  });

  fastify.post(`${APPS}/revoke`, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (!kit.csrfValid(request, body.csrf_token)) return refused(reply);
    const who = await signedInHere(request);
    if (!who) return showLogin(request, reply, 200, EXPIRED);
    try {
      await services.authorizedApps.revoke(viewerOf(request, who), typeof body.id === 'string' ? body.id : '');
    } catch (err) {
      // another person's entry, or one already revoked
      if (err instanceof NotFoundError) return problem(reply, 404, 'This app is not in your list of authorized apps (any more). Nothing was changed.');
      throw err;
    }
    return reply.redirect(`${APPS}?notice=revoked`, 303);
  });

  fastify.get(LOGOUT, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const returnTo = sameOriginPath(query.return_to);
    if (query.return_to !== undefined && returnTo === undefined) {
      return problem(reply, 400, 'return_to must be a path on this site.');
    }
    const who = await kit.signedIn(request);
    if (!who) return page(reply, 200, signedOutPage());
    return page(reply, 200, signOutPage({ userEmail: who.user.email, action: LOGOUT, csrf: kit.csrfFor(request, reply), returnTo }));
  });

  fastify.post(LOGOUT, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (!kit.csrfValid(request, body.csrf_token)) return refused(reply);
    await kit.endSession(request, reply);
    const returnTo = sameOriginPath(body.return_to);
    return returnTo ? reply.redirect(returnTo, 303) : page(reply, 200, signedOutPage());
  });
}
