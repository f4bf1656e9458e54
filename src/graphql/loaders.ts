import DataLoader from 'dataloader';
import type { Services } from '../domain/services';
import type { Viewer } from '../domain/auth/viewer';
import type { OAuthClientSecretRecord } from '../domain/oauth-clients/oauth-client.service';
import type { OAuthTokenRecord } from '../domain/oauth-tokens/oauth-token.service';
import { OAuthClient } from './types/oauth-client.types';
import { User } from './types/directory.types';

const CLIENT_TOKENS_LIMIT = 100;

function byId<T extends { id: bigint }>(ids: readonly bigint[], rows: T[]): (T | null)[] {
  const map = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => map.get(id) ?? null);
}

/**
 * Per-request batching of related objects (no N+1). Each loader reads through
 * the service with the viewer, so the policy's row scope applies as it does to
 * the root fields: a record the viewer may not see loads as null. Created lazily.
 * Clients and users load as their GraphQL objects, made once per id: a page of 100
 * tokens of one client shares one OAuthClient instead of converting it 100 times.
 */
export class Loaders {
  private clients?: DataLoader<bigint, OAuthClient | null>;
  private users?: DataLoader<bigint, User | null>;
  private tokens?: DataLoader<bigint, OAuthTokenRecord[]>;
  private secrets?: DataLoader<bigint, OAuthClientSecretRecord[]>;

  constructor(private readonly services: Services, private readonly viewer: Viewer, private readonly baseUrl: string) {}

  get clientById() {
    return (this.clients ??= new DataLoader(async (ids) =>
      byId(ids, await this.services.oauthClients.findMany(this.viewer, ids)).map((r) => r && OAuthClient.from(r))));
  }

  get userById() {
    return (this.users ??= new DataLoader(async (ids) =>
      byId(ids, await this.services.users.findMany(this.viewer, ids)).map((r) => r && User.from(r, this.baseUrl))));
  }

  get tokensByClientId() {
    return (this.tokens ??= new DataLoader(async (ids) => {
      const rows = await this.services.oauthTokens.firstByClients(this.viewer, ids, CLIENT_TOKENS_LIMIT);
      return ids.map((id) => rows.filter((r) => r.clientId === id));
    }));
  }

  get secretsByClientId() {
    return (this.secrets ??= new DataLoader(async (ids) => {
      const rows = await this.services.oauthClients.liveSecretsOf(this.viewer, ids);
      return ids.map((id) => rows.filter((r) => r.clientId === id));
    }));
  }
}
