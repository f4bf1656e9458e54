import type { OAuthTokenRecord } from '../oauth-tokens/oauth-token.types';

/** The success body of the grant endpoint (RFC 6749 §5.1, Zendesk's field names). */
export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  /** space-separated */
  scope: string;
  expires_in: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
}

export function tokenResponse(record: OAuthTokenRecord, lifetimes: { expiresIn: number; refreshExpiresIn?: number }): TokenResponse {
  const body: TokenResponse = { access_token: record.token, token_type: 'bearer', scope: record.scopes.join(' '), expires_in: lifetimes.expiresIn };
  if (record.refreshToken !== null && lifetimes.refreshExpiresIn !== undefined) {
    body.refresh_token = record.refreshToken;
    body.refresh_token_expires_in = lifetimes.refreshExpiresIn;
  }
  return body;
}
