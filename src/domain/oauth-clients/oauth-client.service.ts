import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { NotFoundError, ValidationError } from '../errors';
import { constantTimeEqual, hmacHex, randomUrlSafe } from '../crypto';
import { parseId } from '../ids';
import { accountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import { actorOf, describedFor, recordAudit } from '../audit/audit-log.repository';
import { changeEvent, clientDetail } from '../events/event-details';
import { isUniqueViolation } from '../directory/user-fields';
import { validateOAuthClient, type OAuthClientInput } from './oauth-client.validation';
import { ClientGrantCache, type ClientCheck } from './client-grant-cache';
import type { NewSecret, OAuthClientRecord, OAuthClientRepository } from './oauth-client.repository';
import { MAX_GRACE_PERIOD_SECONDS, type OAuthClientSecretRecord, type OAuthClientSecretRepository } from './oauth-client-secret.repository';

export type { OAuthClientRecord } from './oauth-client.repository';
export type { OAuthClientSecretRecord } from './oauth-client-secret.repository';

const identifierTaken = () =>
  new ValidationError({ client_identifier: [{ error: 'InvalidValue', description: 'Client identifier: has already been taken' }] });

/** A client found by its identifier at a grant endpoint, and whether the presented secret is one of its live ones. */
export interface ClientForGrant {
  client: OAuthClientRecord;
  secretMatched: boolean;
  /** found in the cache: what the statement that uses the client must check first (clientCheckSql) */
  check?: ClientCheck;
}

/** The cache's key: the identifier on the host it was presented on (the plain host and each subdomain may name different clients). */
const grantCacheKey = (identifier: string, subdomain?: string) => `${subdomain ?? ''}\n${identifier}`;

/**
 * OAuth clients of the viewer's account (docs/api.md, "OAuth clients"): validation, secrets, and
 * what deleting one takes with it. Every change runs in one transaction with its
 * audit record and its event (recordAudit on that transaction's connection).
 */
export class OAuthClientService {
  constructor(
    private readonly db: Transactions,
    private readonly clients: OAuthClientRepository,
    private readonly secrets: OAuthClientSecretRepository,
    private readonly repos: RepositoryFactory,
    private readonly hashKey: Buffer,
    private readonly grantCache = new ClientGrantCache(),
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

  /** The client, its first secret and the audit record, in one transaction. */
  create(viewer: Viewer, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const fields = validateOAuthClient(input, false);
    const secret = this.newSecret();
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const client = await tx.clients.insert(
        { accountId: viewer.accountId, agentId: viewer.userId },
        {
          name: fields.name!,
          company: fields.company ?? null,
          clientType: fields.clientType ?? 'public',
          scopes: fields.scopes!,
          redirectUris: fields.redirectUris!,
          // the caller's (Zendesk Support's "identifier"), or 40 url-safe characters
          identifier: fields.identifier ?? randomUrlSafe(30),
          description: fields.description ?? null,
          logoUrl: fields.logoUrl ?? null,
        },
        secret.secret,
      ).catch((err: unknown) => {
        // unique per account only: another account's identical identifier is never reported
        throw isUniqueViolation(err) ? identifierTaken() : err;
      });
      await tx.secrets.insertFirst(client, secret);
      await recordAudit(sql, actorOf(viewer), {
        action: 'create', sourceType: 'oauth_client', sourceId: client.id, sourceLabel: client.name,
        // a create names the fields it set, as the directory's do (never the secret's value)
        changedFields: [
          'name', ...(client.company ? ['company'] : []), 'client_type', 'scopes', 'redirect_uris', 'client_secret',
          ...(fields.identifier ? ['client_identifier'] : []), ...(client.description ? ['description'] : []), ...(client.logoUrl ? ['logo_url'] : []),
        ],
        description: describedFor(viewer, `Created a ${client.clientType} client with scopes ${client.scopes}`),
        event: { name: 'oauth_client.created', subject: `oauth_client:${client.id}`, detail: clientDetail(client) },
      });
      return client;
    });
  }

  /** The given fields, and an audit record naming those whose value changed, in one transaction. */
  async update(viewer: Viewer, rawId: unknown, input: OAuthClientInput): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const { identifier, ...fields } = validateOAuthClient(input, true);
    return tenantTransaction(this.db, async (sql) => {
      const updated = (await this.repos(sql).clients.update(accountScope(viewer), id, fields)) ?? this.notFound();
      // an identifier is the client_id its integrations hold: the same value is accepted, another refused
      if (identifier !== undefined && identifier !== updated.client.identifier) {
        throw new ValidationError({ client_identifier: [{ error: 'InvalidValue', description: 'Client identifier: cannot be changed after the client is created' }] });
      }
      const { client, changed, previous } = updated;
      const detail = clientDetail(client);
      const before = { ...previous, redirect_uris: Array.isArray(previous.redirect_uris) ? previous.redirect_uris.join(' ') : previous.redirect_uris };
      await recordAudit(sql, actorOf(viewer), {
        action: 'update', sourceType: 'oauth_client', sourceId: client.id, sourceLabel: client.name, changedFields: changed,
        description: describedFor(viewer, changed.length ? `Changed ${changed.join(', ')}` : 'Saved without changing a field'),
        event: { name: 'oauth_client.updated', subject: `oauth_client:${client.id}`, detail, event: changeEvent(changed, before, detail) },
      });
      return client;
    });
  }

  /**
   * Deletes the client and revokes all its tokens in one transaction, with one
   * audit record for the client (saying how many tokens went with it), not one per token.
   */
  async delete(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = this.requireId(rawId);
    await tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const client = (await tx.clients.lockForDelete(accountScope(viewer), id)) ?? this.notFound();
      const revoked = await tx.tokens.revokeAllOfClient(accountScope(viewer), id);
      await tx.clients.delete(accountScope(viewer), id);
      await recordAudit(sql, actorOf(viewer), {
        action: 'destroy', sourceType: 'oauth_client', sourceId: id, sourceLabel: client.name,
        description: describedFor(viewer, `Deleted; ${revoked} ${revoked === 1 ? 'token' : 'tokens'} revoked with it`),
        // its tokens are revoked with it: counted here, not one oauth_token.revoked each (docs/api.md, "Events")
        event: { name: 'oauth_client.deleted', subject: `oauth_client:${id}`, detail: clientDetail(client), event: { revoked_token_count: revoked } },
      });
    });
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
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      if (!(await tx.secrets.rotate(scope, id, secret, grace))) this.notFound();
      const client = (await tx.clients.touchForNewSecret(scope, id, secret.secret)) ?? this.notFound();
      // the field's name only: never the secret
      await recordAudit(sql, actorOf(viewer), {
        action: 'update', sourceType: 'oauth_client', sourceId: id, sourceLabel: client.name, changedFields: ['client_secret'],
        description: describedFor(
          viewer,
          grace > 0 ? `Generated a new client secret; the previous one stays valid for ${grace} seconds` : 'Generated a new client secret; the previous one stopped working',
        ),
        event: { name: 'oauth_client.secret_regenerated', subject: `oauth_client:${id}`, detail: clientDetail(client), event: { grace_period: grace } },
      });
      return client;
    });
  }

  /**
   * Ends the grace period of the previous secret now: only the current one stays
   * valid. Recorded when a previous secret was still valid (otherwise nothing changed).
   */
  async endSecretGracePeriod(viewer: Viewer, rawId: unknown): Promise<OAuthClientRecord> {
    const id = this.requireId(rawId);
    const scope = accountScope(viewer);
    return tenantTransaction(this.db, async (sql) => {
      const tx = this.repos(sql);
      const ended = (await tx.secrets.endGracePeriod(scope, id)) ?? this.notFound();
      const client = (await tx.clients.find(scope, id)) ?? this.notFound();
      if (ended > 0) {
        await recordAudit(sql, actorOf(viewer), {
          action: 'update', sourceType: 'oauth_client', sourceId: id, sourceLabel: client.name, changedFields: ['client_secret'],
          description: describedFor(viewer, 'Ended the grace period of the previous client secret: it stopped working'),
          event: { name: 'oauth_client.updated', subject: `oauth_client:${id}`, detail: clientDetail(client), event: changeEvent(['client_secret'], {}, {}) },
        });
      }
      return client;
    });
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
   * `cached` (client_credentials, refresh_token, introspection): a client that matched is
   * kept a minute (client-grant-cache.ts) and found there next; the caller's statement
   * then checks it still holds (`check`).
   * With `subdomain`, a client of another account is not found (as an unknown one).
   */
  async findForGrant(identifier: string, secret: string | undefined, subdomain?: string, cached = false): Promise<ClientForGrant | null> {
    const presented = hmacHex(this.hashKey, secret ?? '');
    const key = grantCacheKey(identifier, subdomain);
    // a cached client (client-grant-cache.ts): the statement that uses it checks it still holds
    const hit = cached && secret !== undefined ? this.grantCache.match(key, presented) : undefined;
    if (hit) return { client: hit.client, secretMatched: true, check: hit.check };
    const found = await this.clients.findByIdentifier(identifier, subdomain);
    const candidates = found?.secrets.length ? found.secrets : [{ id: 0n, hash: '0'.repeat(presented.length), stale: false, expiresAt: null }];
    let matched: (typeof candidates)[number] | undefined;
    for (const candidate of candidates) if (constantTimeEqual(presented, candidate.hash)) matched = candidate;
    if (!found) return null;
    const secretMatched = secret !== undefined && matched !== undefined && found.secrets.length > 0;
    if (secretMatched && matched!.stale) await this.secrets.touch(found.client, matched!.id);
    if (secretMatched && cached) this.grantCache.store(key, found.client, found.secrets);
    return { client: found.client, secretMatched };
  }

  /** Drops the cached client of `identifier` on that host: its statement found it changed (the caller looks it up again). */
  forgetForGrant(identifier: string, subdomain?: string): void {
    this.grantCache.forget(grantCacheKey(identifier, subdomain));
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
