import type { Params } from './params';
import type { ProtocolRequest } from './client-authentication';
import { validateAuthorizationRequest, type AuthorizationRequestCheck } from './authorization-request';
import { issueAuthorizationCode, issueRememberedCode, type IssueAuthorizationCodeInput } from './authorization-code';
import { tokenEndpoint } from './token-endpoint';
import { revocationEndpoint } from './revocation';
import { introspectionEndpoint, type IntrospectionResponse } from './introspection';
import { authorizationServerMetadata } from './metadata';
import type { TokenResponse } from './token-response';
import type { OAuthServerDeps } from './oauth-server.deps';

export { authorizationResponseUrl, type AuthorizationRequest, type AuthorizationRequestCheck } from './authorization-request';
export type { IssueAuthorizationCodeInput } from './authorization-code';

/**
 * The OAuth 2.0 authorization server (docs/api.md, "OAuth 2.0 authorization server"):
 * one method per action, each in its own file. The HTTP plugin
 * (http/plugins/oauth-server.ts) and the authorization pages call these; they
 * throw OAuthError subclasses for protocol errors.
 */
export class OAuthServer {
  constructor(private readonly deps: OAuthServerDeps) {}

  /** Checks GET /oauth/authorizations/new's query (see authorization-request.ts for how the pages use it). */
  validateAuthorizationRequest(query: Params, subdomain?: string): Promise<AuthorizationRequestCheck> {
    return validateAuthorizationRequest(this.deps, query, subdomain);
  }

  /** After consent: the authorization code, returned this once. */
  issueAuthorizationCode(input: IssueAuthorizationCodeInput): Promise<{ code: string; expiresAt: Date }> {
    return issueAuthorizationCode(this.deps, input);
  }

  /** A code without the consent page, when the user already allowed these scopes to this client (null: ask). */
  rememberedAuthorizationCode(input: IssueAuthorizationCodeInput): Promise<{ code: string; expiresAt: Date } | null> {
    return issueRememberedCode(this.deps, input);
  }

  token(request: ProtocolRequest): Promise<TokenResponse> {
    return tokenEndpoint(this.deps, request);
  }

  revoke(request: ProtocolRequest): Promise<void> {
    return revocationEndpoint(this.deps, request);
  }

  introspect(request: ProtocolRequest): Promise<IntrospectionResponse> {
    return introspectionEndpoint(this.deps, request);
  }

  metadata(issuer: string) {
    return authorizationServerMetadata(issuer);
  }
}
