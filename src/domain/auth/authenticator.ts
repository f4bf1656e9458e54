import type { LoginRepository } from './login.repository';
import type { PresentedTokenRepository } from '../oauth-tokens/presented-token.repository';
import type { Limits } from '../../config';
import { ForbiddenError, UnauthenticatedError } from '../errors';
import { hmacHex } from '../crypto';
import { allScopesValid } from '../scopes';
import { BasicLogin } from './basic-login';
import type { LoginAttempts } from './login-attempt';
import type { Viewer } from './viewer';

export interface Credentials {
  authorization?: string;
  onBehalfOf?: string;
  /** the client's address (Fastify's request.ip): the per-address login throttle, and the KDF queue's fairness */
  address?: string;
  /** the account subdomain of the Host the request came on (request-context.ts); undefined on the plain host */
  subdomain?: string;
}

export interface AuthenticatorOptions {
  /** every statement of the login: credential lookup and throttle windows */
  logins: LoginRepository;
  /** the one login-attempt protocol (throttle, KDF queue, counting), shared with the previous-password check */
  attempts: LoginAttempts;
  /** the Bearer lookup */
  tokens: PresentedTokenRepository;
  hashKey: Buffer;
  limits: Pick<Limits, 'loginFailures' | 'loginAddressFailures' | 'loginWindowSeconds'>;
}

/**
 * Turns the Authorization (and X-On-Behalf-Of) headers into a Viewer.
 * Bearer: one indexed query, no KDF. Basic: basic-login.ts (one KDF per attempt
 * not answered from its cache, throttled in the database).
 */
export class Authenticator {
  private readonly basicLogin: BasicLogin;

  constructor(private readonly options: AuthenticatorOptions) {
    this.basicLogin = new BasicLogin(options);
  }

  /** null when no credentials were presented. */
  async authenticate(credentials: Credentials): Promise<Viewer | null> {
    const header = credentials.authorization?.trim();
    if (!header) {
      if (credentials.onBehalfOf !== undefined) throw new UnauthenticatedError();
      return null;
    }
    const space = header.indexOf(' ');
    const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer') {
      const viewer = await this.bearer(value, credentials.subdomain);
      return credentials.onBehalfOf === undefined ? viewer : this.impersonate(viewer, credentials.onBehalfOf);
    }
    if (scheme === 'basic') {
      const viewer = await this.basicLogin.login(value, credentials.address, credentials.subdomain);
      if (credentials.onBehalfOf !== undefined) throw new ForbiddenError();
      return viewer;
    }
    throw new UnauthenticatedError();
  }

  hashToken(token: string): string {
    return hmacHex(this.options.hashKey, token);
  }

  /**
   * On a subdomain host, a token of another account (or any token, when no account
   * has that subdomain) is refused exactly like an unknown token: 401, and no
   * used_at touch. On the plain host a token works as it always did.
   */
  private async bearer(token: string, subdomain: string | undefined): Promise<Viewer> {
    if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) throw new UnauthenticatedError('Bearer');
    const found = await this.options.tokens.findPresented(this.hashToken(token), subdomain);
    if (!found) throw new UnauthenticatedError('Bearer');
    const { record } = found;
    // A token with any invalid scope is refused outright (docs/api.md, "Scopes and roles").
    if (!allScopesValid(record.scopes)) throw new ForbiddenError();
    return {
      accountId: record.accountId,
      userId: record.userId,
      role: found.role,
      email: found.email,
      name: found.name,
      via: 'bearer',
      token: { id: record.id, scopes: record.scopes, clientScopes: found.clientScopes, record },
    };
  }

  private async impersonate(viewer: Viewer, email: string): Promise<Viewer> {
    const token = viewer.token;
    if (!token || viewer.role !== 'admin' || !token.scopes.includes('impersonate') || email.includes('\0')) throw new ForbiddenError();
    const target = await this.options.logins.activeEndUser(viewer.accountId, email.trim().toLowerCase());
    if (!target) throw new ForbiddenError();
    return {
      accountId: viewer.accountId,
      userId: BigInt(target.id),
      role: 'end_user',
      email: target.email,
      name: target.name,
      via: 'bearer',
      token,
      impersonatorId: viewer.userId,
      impersonatorName: viewer.name,
    };
  }
}
