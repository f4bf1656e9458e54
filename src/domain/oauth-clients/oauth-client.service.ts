import type { Db } from '../../db/create-db';
import { NotFoundError, ValidationError } from '../errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import type { OAuthTokenRepository } from '../oauth-tokens/oauth-token.repository';
import { validateOAuthClient, type OAuthClientInput } from './oauth-client.validation';
import { OAuthClientRepository, type NewSecret, type OAuthClientRecord } from './oauth-client.repository';
import { MAX_GRACE_PERIOD_SECONDS, OAuthClientSecretRepository, type OAuthClientSecretRecord } from './oauth-client-secret.repository';

export type { OAuthClientRecord } from './oauth-client.repository';
export type { OAuthClientSecretRecord } from './oauth-client-secret.repository';

/** A client found by its identifier at a grant endpoint, and whether the presented secret is one of its live ones. */
export interface ClientForGrant {
  client: OAuthClientRecord;
  secretMatched: boolean;
}
export { truncateSecret } from './oauth-client.repository';

/** OAuth clients of the viewer's account (API.md §5): validation, secrets, and what deleting one takes with it. */
export class OAuthClientService {
  constructor(
    private readonly db: Pick<Db, 'sql' | 'prisma' | 'transaction'>,
    private readonly clients: OAuthClientRepository,
    private readonly secrets: OAuthClientSecretRepository,
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

  /** The client and its first secret, in one transaction. */
  create(viewer: Viewer, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const fields = validateOAuthClient(input, false);
    const secret = this.newSecret();
    return this.db.transaction(async (sql) => {
      const client = await new OAuthClientRepository({ sql, prisma: this.db.prisma }).insert(
        { accountId: viewer.accountId, agentId: viewer.userId },
        {
          name: fields.name!,
          company: fields.company ?? null,
          clientType: fields.clientType ?? 'public',
          scopes: fields.scopes!,
          redirectUris: fields.redirectUris!,
          identifier: randomUrlSafe(30), // 40 url-safe characters
        },
        secret.secret,
      );
      await new OAuthClientSecretRepository({ sql }).insertFirst(client, secret);
      return client;
    });
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

  /**
   * A new secret, shown once. The previous one stops working at once, or, with
   * `gracePeriod` seconds (0..604800), stays valid at the grant endpoints until then.
   */
  async regenerateSecret(viewer: Viewer, rawId: unknown, gracePeriod?: unknown): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const grace = gracePeriod === undefined || gracePeriod === null ? 0 : gracePeriod;
    if (typeof grace !== 'number' || !Number.isSafeInteger(grace) || grace < 0 || grace > MAX_GRACE_PERIOD_SECONDS) {
      throw new ValidationError({
        grace_period: [{ error: 'InvalidValue', description: `Grace period: must be an integer number of seconds from 0 to ${MAX_GRACE_PERIOD_SECONDS}` }],
      });
    }
    const secret = this.newSecret();
    const scope = accountScope(viewer);
    if (!(await this.secrets.rotate(scope, id, secret, grace))) this.notFound();
    return (await this.clients.touchForNewSecret(scope, id, secret.secret)) ?? this.notFound();
  }

  /** Ends the grace period of the previous secret now: only the current one stays valid. */
  async endSecretGracePeriod(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    if (!(await this.secrets.endGracePeriod(accountScope(viewer), id))) this.notFound();
    return (await this.clients.find(accountScope(viewer), id)) ?? this.notFound();
  }

  /** Live secrets of clients the viewer may see, for DataLoader batching of OAuthClient.secrets. */
  liveSecretsOf(viewer: Viewer, clientIds: readonly bigint[]): Promise<OAuthClientSecretRecord[]> {
    return this.secrets.liveOfClients(accountScope(viewer), clientIds);
  }

  /**
   * For the grant endpoints: the client `identifier`, and whether `secret` is one
   * of its live secrets (current, or previous in its grace period). Every live
   * secret is compared, in constant time, and an unknown client costs the same
   * comparison. A match is recorded as the secret's last use, at most once a minute.
   */
  async findForGrant(identifier: string, secret: string | undefined): Promise<ClientForGrant | null> {
    const found = await this.clients.findByIdentifier(identifier);
    const presented = hmacHex(this.hashKey, secret ?? '');
    const candidates = found?.secrets.length ? found.secrets : [{ id: 0n, hash: '0'.repeat(presented.length), stale: false }];
    let matched: (typeof candidates)[number] | undefined;
    for (const candidate of candidates) if (constantTimeEqual(presented, candidate.hash)) matched = candidate;
    if (!found) return null;
    const secretMatched = secret !== undefined && matched !== undefined && found.secrets.length > 0;
    if (secretMatched && matched!.stale) await this.secrets.touch(matched!.id);
    return { client: found.client, secretMatched };
  }

  /** Does `secret` belong to the client `identifier` (current, or previous in its grace period)? */
  async verifySecret(identifier: string, secret: string): Promise<boolean> {
    return (await this.findForGrant(identifier, secret))?.secretMatched ?? false;
  }

  private requireId(raw: unknown): bigint {
    return parseId(raw) ?? this.notFound();
  }

  private notFound(): never {
    throw new NotFoundError();
  }
}
