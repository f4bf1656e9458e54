import { ArgsType, Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { Connection, PageArgs } from '../connection';
import type { OAuthTokenRecord } from '../../domain/oauth-tokens/oauth-token.service';

export enum OAuthGrantType {
  AUTHORIZATION_CODE = 'authorization_code',
  REFRESH_TOKEN = 'refresh_token',
  CLIENT_CREDENTIALS = 'client_credentials',
}
registerEnumType(OAuthGrantType, { name: 'OAuthGrantType', description: 'How the grant endpoint (POST /oauth/tokens) issued a token' });

@ObjectType({ simpleResolvers: true, description: 'An OAuth access token' })
export class OAuthToken {
  @Field(() => ID) id!: string;
  @Field({ description: 'In full only in the createOAuthToken response; otherwise its first 10 characters' }) token!: string;
  @Field(() => ID, { nullable: true, description: 'null once the client was deleted' }) clientId!: string | null;
  @Field(() => ID) userId!: string;
  @Field(() => [String], { description: 'As given at creation, invalid ones included' }) scopes!: string[];
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'null: the token does not expire (tokens made by admins)' }) expiresAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'Last time it authenticated a request (updated at most once a minute)' }) usedAt!: Date | null;
  @Field(() => String, { nullable: true, description: 'Its first 10 characters; null for tokens made by admins and client-credentials tokens' })
  refreshToken!: string | null;
  @Field(() => Date, { nullable: true }) refreshTokenExpiresAt!: Date | null;
  @Field(() => OAuthGrantType, { nullable: true, description: 'null for tokens made by admins through this API' }) grantType!: OAuthGrantType | null;
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

@ObjectType({ simpleResolvers: true, description: 'Relay connection of tokens, id ascending' })
export class OAuthTokenConnection extends Connection(OAuthToken) {}

@ArgsType()
export class OAuthTokensArgs extends PageArgs {
  @Field(() => Boolean, { defaultValue: false, description: "Every token of the account (admins) instead of the viewer's own" }) all!: boolean;
  @Field(() => ID, { nullable: true, description: 'Only the tokens of this client' }) clientId?: string | null;
}

@InputType()
export class CreateOAuthTokenInput {
  @Field(() => ID, { nullable: true, description: "The client's id (not its identifier)" }) clientId?: string | null;
  @Field(() => [String], { nullable: true, description: 'e.g. ["read"], ["read", "write"]' }) scopes?: string[] | null;
}
