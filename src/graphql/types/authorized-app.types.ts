import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { AuthorizedApp as AuthorizedAppRecord } from '../../domain/oauth-server/authorized-apps.service';

export enum AuthorizedAppKind {
  GRANT = 'grant',
  TOKEN = 'token',
}
registerEnumType(AuthorizedAppKind, {
  name: 'AuthorizedAppKind',
  description: 'What gave an app access to your account',
  valuesConfig: {
    GRANT: { description: 'You allowed the app on the consent page (authorization code flow); revoking it ends all its tokens' },
    TOKEN: { description: 'A token issued to you outside a consent (created with POST /api/v2/oauth/tokens, or a client_credentials token of a client you created)' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'The app (OAuth client) an authorized app entry is for, as you may see it' })
export class AuthorizedAppClient {
  @Field(() => ID, { description: "The client's id (not its identifier)" }) id!: string;
  @Field({ description: "The client's name, as shown on the consent page" }) name!: string;
  @Field(() => String, { nullable: true, description: 'The company behind the client; null if none was given' }) company!: string | null;
}

@ObjectType({ simpleResolvers: true, description: 'An app that can act as you: a consent you gave, or a token issued to you (docs/api.md, "Your authorized apps")' })
export class AuthorizedApp {
  @Field(() => ID, { description: "The entry's id, what revokeAuthorizedApp takes: grant-<id> for a consent, token-<id> for a token" }) id!: string;
  @Field(() => AuthorizedAppKind, { description: 'A consent (GRANT) or a token outside a consent (TOKEN)' }) kind!: AuthorizedAppKind;
  @Field(() => AuthorizedAppClient, { description: 'The app' }) client!: AuthorizedAppClient;
  @Field(() => [String], { description: 'The scopes you allowed (a consent) or the token carries' }) scopes!: string[];
  @Field({ description: 'When you allowed it, or when the token was issued (ISO 8601, UTC)' }) grantedAt!: Date;
  @Field(() => Date, { nullable: true, description: "Last time one of its tokens authenticated a request (updated at most once a minute); null if never" }) lastUsedAt!: Date | null;

  static from(r: AuthorizedAppRecord): AuthorizedApp {
    return Object.assign(new AuthorizedApp(), {
      id: r.id,
      kind: r.kind as AuthorizedAppKind,
      client: Object.assign(new AuthorizedAppClient(), { id: String(r.client.id), name: r.client.name, company: r.client.company }),
      scopes: r.scopes,
      grantedAt: r.grantedAt,
      lastUsedAt: r.lastUsedAt,
    });
  }
}
