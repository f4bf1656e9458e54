import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { OAuthClientRecord, OAuthClientSecretRecord } from '../../domain/oauth-clients/oauth-client.service';

export enum OAuthClientType {
  PUBLIC = 'public',
  CONFIDENTIAL = 'confidential',
}
registerEnumType(OAuthClientType, {
  name: 'OAuthClientType',
  description: 'Whether a client can keep a secret (RFC 6749 client types)',
  valuesConfig: {
    PUBLIC: { description: 'Runs where a secret cannot be kept (a browser or native app): may send its client_id alone, must use PKCE, and cannot use client_credentials' },
    CONFIDENTIAL: { description: 'Runs on a server: must authenticate at the grant endpoints with its secret' },
  },
});

@ObjectType({ simpleResolvers: true, description: 'An application registered to obtain access' })
export class OAuthClient {
  @Field(() => ID, { description: "The client's id (not its identifier)" }) id!: string;
  @Field({ description: "The application's name, shown on the consent page; 1..255 characters" }) name!: string;
  @Field(() => String, { nullable: true, description: 'The company behind the application, at most 255 characters; null when none' }) company!: string | null;
  @Field({ description: 'The OAuth client_id: chosen on create (1..100 letters, digits, "_", "." or "-") or generated (40 URL-safe characters); unique in the account, immutable' })
  clientIdentifier!: string;
  @Field({ description: 'In full only from create and generate-secret; otherwise its first 10 characters followed by "..."' })
  clientSecret!: string;
  @Field(() => OAuthClientType, { description: 'Whether the client can keep a secret' }) clientType!: OAuthClientType;
  @Field(() => [String], { description: 'Where the authorization endpoint may send the user back: absolute URIs, compared exactly' }) redirectUris!: string[];
  @Field({ description: 'What its tokens may be granted at most: "read", "write" or "read write"' }) scopes!: string;
  @Field(() => ID, { nullable: true, description: 'The admin who created the client; null if that user no longer exists' }) agentId!: string | null;
  @Field({ description: 'When the client was created (ISO 8601, UTC)' }) createDate!: Date;
  @Field(() => Date, { nullable: true, description: 'When the client last changed or got a new secret; null after create' }) updateDate!: Date | null;
  @Field(() => String, { nullable: true, description: 'A short description of the application for the people asked to allow it, at most 1024 characters; null when none' })
  description!: string | null;
  @Field(() => String, { nullable: true, description: "The application's logo: an absolute https URL (http only on localhost, 127.0.0.1 or [::1]), at most 2048 characters; null when none" })
  logoUrl!: string | null;

  static from(r: OAuthClientRecord): OAuthClient {
    return Object.assign(new OAuthClient(), {
      id: String(r.id),
      name: r.name,
      company: r.company,
      clientIdentifier: r.identifier,
      clientSecret: r.clientSecret,
      clientType: r.clientType as OAuthClientType,
      redirectUris: r.redirectUris,
      scopes: r.scopes,
      agentId: r.agentId === null ? null : String(r.agentId),
      createDate: r.createdAt,
      updateDate: r.updatedAt,
      description: r.description,
      logoUrl: r.logoUrl,
    });
  }
}

@InputType({ description: 'Writable fields of a client; on update, omitted fields keep their value' })
export class OAuthClientInput {
  @Field(() => String, { nullable: true, description: "The application's name: required on create, 1..255 characters after trimming" }) name?: string | null;
  @Field(() => String, { nullable: true, description: 'The company behind the application, at most 255 characters; "" or null for none' }) company?: string | null;
  @Field(() => OAuthClientType, { nullable: true, description: 'Whether the client can keep a secret; PUBLIC by default' }) clientType?: OAuthClientType | null;
  @Field(() => String, { nullable: true, description: 'What its tokens may be granted at most: required on create, "read", "write" or "read write"' }) scopes?: string | null;
  @Field(() => [String], { nullable: true, description: 'Required on create: absolute URIs (https, http on loopback, or a native app scheme)' })
  redirectUris?: string[] | null;
  @Field(() => String, {
    nullable: true,
    description: 'The OAuth client_id, 1..100 letters, digits, "_", "." or "-", unique in the account: generated when omitted on create; it never changes, so on update only its current value is accepted',
  })
  clientIdentifier?: string | null;
  @Field(() => String, { nullable: true, description: 'A short description of the application, at most 1024 characters; "" or null for none' }) description?: string | null;
  @Field(() => String, { nullable: true, description: 'An absolute https URL of its logo (http only on localhost, 127.0.0.1 or [::1]), at most 2048 characters; "" or null for none' })
  logoUrl?: string | null;
}

@ObjectType({ simpleResolvers: true, description: "A live secret of a client: the current one, or the previous one during a rotation's grace period" })
export class OAuthClientSecret {
  @Field(() => ID, { description: "The secret's id" }) id!: string;
  @Field({ description: 'Its first 10 characters (the secret itself is stored only as a keyed hash)' }) prefix!: string;
  @Field({ description: 'When the secret was generated (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'Last client authentication with it at the grant endpoints (updated at most once a minute)' })
  lastUsedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'When the secret stops working: null for the current secret; the end of the grace period for the previous one' })
  expiresAt!: Date | null;

  static from(r: OAuthClientSecretRecord): OAuthClientSecret {
    return Object.assign(new OAuthClientSecret(), { id: String(r.id), prefix: r.prefix, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, expiresAt: r.expiresAt });
  }
}
