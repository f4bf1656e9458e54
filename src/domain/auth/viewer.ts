export type Role = 'admin' | 'agent' | 'end_user';

export interface PresentedToken {
  id: bigint;
  scopes: string[];
  /** the client's "read"/"write"/"read write": caps the token */
  clientScopes: string;
  /** the token's row as the authenticator read it, so that "current" costs no second query */
  row?: PresentedTokenRow;
}

export interface PresentedTokenRow {
  accountId: bigint;
  clientId: bigint | null;
  userId: bigint;
  tokenPrefix: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  usedAt: Date | null;
  grantType: 'authorization_code' | 'refresh_token' | 'client_credentials' | null;
  refreshTokenPrefix: string | null;
  refreshTokenExpiresAt: Date | null;
}

/** Who a request acts as, established once per request by the authenticator. */
export interface Viewer {
  accountId: bigint;
  userId: bigint;
  role: Role;
  email: string;
  name: string;
  via: 'basic' | 'bearer';
  /** set when a Bearer token authenticated the request */
  token?: PresentedToken;
  /** the admin who impersonates, when X-On-Behalf-Of was honoured */
  impersonatorId?: bigint;
}
