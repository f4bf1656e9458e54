// What a token is, as every layer reads it. Apart from the other token shapes
// (oauth-token.types.ts), which import the viewer: the viewer carries the
// presented token's record, and must not import them back (no cycle in src).

export interface OAuthTokenRecord {
  id: bigint;
  accountId: bigint;
  clientId: bigint | null;
  userId: bigint;
  /** full right after create, else the first 10 characters */
  token: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  usedAt: Date | null;
  /** how the grant endpoint issued it; null for tokens made by admins */
  grantType: GrantType | null;
  /** full right after issue, else its first 10 characters; null when it has none */
  refreshToken: string | null;
  refreshTokenExpiresAt: Date | null;
}

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials';
