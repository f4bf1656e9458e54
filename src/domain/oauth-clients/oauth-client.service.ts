import { NotFoundError } from '../errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import type { OAuthTokenRepository } from '../oauth-tokens/oauth-token.repository';
import { validateOAuthClient, type OAuthClientInput } from './oauth-client.validation';
import type { NewSecret, OAuthClientRecord, OAuthClientRepository } from './oauth-client.repository';

export type { OAuthClientRecord } from './oauth-client.repository';
export { truncateSecret } from './oauth-client.repository';

/** OAuth clients of the viewer's account (API.md §5): validation, secrets, and what deleting one takes with it. */
export class OAuthClientService {
  constructor(
    private readonly clients: OAuthClientRepository,
    private readonly tokens: OAuthTokenRepository,
    private readonly hashKey: Buffer,
  ) {}

  private newSecret(): NewSecret {
    const secret = randomUrlSafe(32); // 256 bits
    return { secret, secretHash: hmacHex(this.hashKey, secret) };
  }

  list(viewer: Viewer): Promise<OAuthClientRecord[]> {
    return this.clients.list(accountScope(viewer));
  }

  async find(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.clients.find(accountScope(viewer), id);
  }

  /** Clients by id that the viewer may see, for DataLoader batching. */
  findMany(viewer: Viewer, ids: readonly bigint[]): Promise<OAuthClientRecord[]> {
    return this.clients.findMany(accountScope(viewer), ids);
  }

  create(viewer: Viewer, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const fields = validateOAuthClient(input, false);
    return this.clients.insert(
      { accountId: viewer.accountId, agentId: viewer.userId },
      {
        name: fields.name!,
        company: fields.company ?? null,
        clientType: fields.clientType ?? 'public',
        scopes: fields.scopes!,
        redirectUris: fields.redirectUris!,
        identifier: randomUrlSafe(30), // 40 url-safe characters
      },
      this.newSecret(),
    );
  }

  async update(viewer: Viewer, rawId: unknown, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const fields = validateOAuthClient(input, true);
    return (await this.clients.update(accountScope(viewer), id, fields)) ?? this.notFound();
  }

  /** Deletes the client and revokes all its tokens in one transaction. */
  async delete(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = this.requireId(rawId);
    const deleted = await this.clients.delete(accountScope(viewer), id, (tx) => this.tokens.revokeAllOfClient(tx, id));
    if (!deleted) this.notFound();
  }

  /** A new secret, shown once; the previous one stops working at once. */
  async regenerateSecret(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    return (await this.clients.setSecret(accountScope(viewer), id, this.newSecret())) ?? this.notFound();
  }

  /** For OAuth flows: does `secret` belong to the client `identifier`? Constant-time on the hashes. */
  async verifySecret(identifier: string, secret: string): Promise<boolean> {
    const stored = await this.clients.secretHashByIdentifier(identifier);
    const presented = hmacHex(this.hashKey, secret);
    // Compare against something of the same length even when the client is unknown.
    return constantTimeEqual(presented, stored ?? '0'.repeat(presented.length)) && stored !== null;
  }

  private requireId(raw: unknown): bigint {
    return parseId(raw) ?? this.notFound();
  }

  private notFound(): never {
    throw new NotFoundError();
  }
}
