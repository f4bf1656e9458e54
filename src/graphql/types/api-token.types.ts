import { Field, ID, InputType, ObjectType } from 'type-graphql';
import type { ApiTokenRecord } from '../../domain/api-tokens/api-token.service';
import { Connection } from '../connection';

// API tokens in GraphQL (docs/api.md, "API tokens"): Zendesk's fields in camelCase.

@ObjectType({ simpleResolvers: true, description: "An API token of the account: Basic `{email}/token:{token}` signs in as that active user of the account, with the user's own role" })
export class ApiToken {
  @Field(() => ID, { description: "The token's id" }) id!: string;
  @Field({ description: 'What the token is for, 1..255 characters' }) description!: string;
  @Field({ description: 'The token in full from createApiToken only, this once; elsewhere its first 10 characters followed by "..."' }) token!: string;
  @Field(() => ID, { nullable: true, description: 'The admin who created it; null once that user is gone' }) createdBy!: string | null;
  @Field({ description: 'When it was created (ISO 8601, UTC)' }) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When it last signed a request in (updated at most once a minute); null until then' }) lastUsedAt!: Date | null;
  @Field({ description: 'The REST address of this token: <base URL>/api/v2/api_tokens/<id>.json' }) url!: string;

  static from(r: ApiTokenRecord, baseUrl: string): ApiToken {
    return Object.assign(new ApiToken(), {
      id: String(r.id), description: r.description, token: r.token, createdBy: r.createdBy === null ? null : String(r.createdBy),
      createdAt: r.createdAt, lastUsedAt: r.lastUsedAt, url: `${baseUrl}/api/v2/api_tokens/${r.id}.json`,
    });
  }
}

@ObjectType({ simpleResolvers: true, description: "A page of the account's API tokens, id ascending" })
export class ApiTokenConnection extends Connection(ApiToken) {}

@InputType({ description: 'A new API token' })
export class ApiTokenInput {
  @Field(() => String, { nullable: true, description: 'What the token is for: required, 1..255 characters after trimming' }) description?: string | null;
}
