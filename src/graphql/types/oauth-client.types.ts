import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { OAuthClientRecord, OAuthClientSecretRecord } from '../../domain/oauth-clients/oauth-client.service';

export enum OAuthClientType {
  PUBLIC = 'public',
  CONFIDENTIAL = 'confidential',
}
registerEnumType(OAuthClientType, { name: 'OAuthClientType' });

@ObjectType({ simpleResolvers: true, description: 'An application registered to obtain access' })
export class OAuthClient {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) company!: string | null;
  @Field({ description: 'Generated, unique, immutable' }) clientIdentifier!: string;
  @Field({ description: 'In full only from create and generate-secret; otherwise its first 10 characters followed by "..."' })
  clientSecret!: string;
  @Field(() => OAuthClientType) clientType!: OAuthClientType;
  @Field(() => [String]) redirectUris!: string[];
  @Field({ description: '"read", "write" or "read write"' }) scopes!: string;
  @Field(() => ID, { nullable: true, description: 'The admin who created the client' }) agentId!: string | null;
  @Field() createDate!: Date;
  @Field(() => Date, { nullable: true }) updateDate!: Date | null;

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
    });
  }
}

@InputType({ description: 'Writable fields of a client; on update, omitted fields keep their value' })
export class OAuthClientInput {
  @Field(() => String, { nullable: true, description: 'Required on create, 1..255 characters' }) name?: string | null;
  @Field(() => String, { nullable: true }) company?: string | null;
  @Field(() => OAuthClientType, { nullable: true, description: 'PUBLIC by default' }) clientType?: OAuthClientType | null;
  @Field(() => String, { nullable: true, description: 'Required on create: "read", "write" or "read write"' }) scopes?: string | null;
  @Field(() => [String], { nullable: true, description: 'Required on create: absolute URIs (https, http on loopback, or a native app scheme)' })
  redirectUris?: string[] | null;
}

@ObjectType({ simpleResolvers: true, description: "A live secret of a client: the current one, or the previous one during a rotation's grace period" })
export class OAuthClientSecret {
  @Field(() => ID) id!: string;
  @Field({ description: 'Its first 10 characters' }) prefix!: string;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'Last client authentication with it at the grant endpoints (updated at most once a minute)' })
  lastUsedAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'null for the current secret; the end of the grace period for the previous one' })
  expiresAt!: Date | null;

  static from(r: OAuthClientSecretRecord): OAuthClientSecret {
    return Object.assign(new OAuthClientSecret(), { id: String(r.id), prefix: r.prefix, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, expiresAt: r.expiresAt });
  }
}
