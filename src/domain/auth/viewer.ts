import type { OAuthTokenRecord } from '../oauth-tokens/oauth-token.record';

export type Role = 'admin' | 'agent' | 'end_user';

export interface PresentedToken {
  id: bigint;
  scopes: string[];
  /** the client's "read"/"write"/"read write": caps the token */
  clientScopes: string;
  /** the token's record as the authenticator read it, so that "current" costs no second query */
  record: OAuthTokenRecord;
}

/** Who a request acts as, established once per request by the authenticator. */
export interface Viewer {
  accountId: bigint;
  userId: bigint;
  role: Role;
  email: string;
  name: string;
  /** basic: email and password; api_token: Basic `{email}/token:{api_token}` (the user's full role, no scopes, as basic); bearer: an OAuth token */
  via: 'basic' | 'bearer' | 'api_token';
  /** set when a Bearer token authenticated the request */
  token?: PresentedToken;
  /** the admin who impersonates, when X-On-Behalf-Of was honoured */
  impersonatorId?: bigint;
  impersonatorName?: string;
  /** where the request came from, for the audit log (set per request by the context builder) */
  origin?: RequestOrigin;
}

/** How a change reached the service: the audit log's via, request id and remote address. */
export interface RequestOrigin {
  /** api (REST /api/v2), graphql, oauth (grant endpoints, authorize page), cli, system (bootstrap) */
  via: 'api' | 'graphql' | 'oauth' | 'cli' | 'system';
  requestId?: string;
  ipAddress?: string;
}
