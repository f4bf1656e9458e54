import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { Connection, PageArgs } from '../connection';
import type { OAuthTokenRecord } from '../../domain/oauth-tokens/oauth-token.service';

export enum OAuthGrantType {
  AUTHORIZATION_CODE = 'authorization_code',
  REFRESH_TOKEN = 'refresh_token',
  CLIENT_CREDENTIALS = 'client_credentials',
}
registerEnumType(OAuthGrantType, {
  name: 'OAuthGrantType',
  description: 'How the grant endpoint (POST /oauth/tokens) issued a token',
  valuesConfig: {
    AUTHORIZATION_CODE: { description: 'A user allowed the client on the consent page, and the client exchanged the code' },
    REFRESH_TOKEN: { description: 'The client exchanged a refresh token (the previous access token of the family was replaced)' },
    CLIENT_CREDENTIALS: { description: 'A confidential client authenticated as itself, for the admin who created it' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'An OAuth access token' })
export class OAuthToken {
  @Field(() => ID, { description: "The token's id" }) id!: string;
  @Field({ description: 'In full only in the createOAuthToken response; otherwise its first 10 characters (stored only as a keyed hash)' }) token!: string;
  @Field(() => ID, { nullable: true, description: 'The client the token was issued to; null once the client was deleted' }) clientId!: string | null;
  @Field(() => ID, { description: 'The user the token acts for' }) userId!: string;
  @Field(() => [String], { description: 'As given at creation, invalid ones included' }) scopes!: string[];
  @Field({ description: 'When the token was issued (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When the token stops working; null: it does not expire (tokens made by admins with Basic)' }) expiresAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'Last time it authenticated a request (updated at most once a minute); null if never' }) usedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'Its first 10 characters; null for tokens made by admins and client-credentials tokens' })
  refreshToken!: string | null;
  @Field(() => Date, { nullable: true, description: 'When its refresh token expires; null without one' }) refreshTokenExpiresAt!: Date | null;
  @Field(() => OAuthGrantType, { nullable: true, description: 'How the grant endpoint issued it; null for tokens made by admins through this API' }) grantType!: OAuthGrantType | null;
  @Field({ description: 'REST URL of this record' }) url!: string;

  static from(r: OAuthTokenRecord, baseUrl: string): OAuthToken {
    return Object.assign(new OAuthToken(), {
      id: String(r.id),
      token: r.token,
      clientId: r.clientId === null ? null : String(r.clientId),
      userId: String(r.userId),
      scopes: r.scopes,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      usedAt: r.usedAt,
      refreshToken: r.refreshToken,
      refreshTokenExpiresAt: r.refreshTokenExpiresAt,
      grantType: r.grantType as OAuthGrantType | null,
      url: `${baseUrl}/api/v2/oauth/tokens/${r.id}.json`,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: 'A page of OAuth tokens, id ascending (Relay connection)' })
export class OAuthTokenConnection extends Connection(OAuthToken) {}

@ArgsType()
export class OAuthTokensArgs extends PageArgs {
  @Field(() => Boolean, { defaultValue: false, description: "Every token of the account (admins) instead of the viewer's own" }) all!: boolean;
  @Field(() => ID, { nullable: true, description: 'Only the tokens of this client' }) clientId?: string | null;
}

@InputType({ description: 'A token to create for the calling admin' })
export class CreateOAuthTokenInput {
  @Field(() => ID, { nullable: true, description: "Required: the client's id (not its identifier), a client of the account" }) clientId?: string | null;
  @Field(() => [String], { nullable: true, description: 'Required: 1..50 scopes of at most 100 characters, e.g. ["read"] or ["read", "write"]; with a Bearer token, no wider than that token' }) scopes?: string[] | null;
}
