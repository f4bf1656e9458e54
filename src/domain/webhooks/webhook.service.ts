import { tenantTransaction } from '../../db/tenant-sql';
import type { RepositoryFactory, Transactions } from '../repositories';
import { actorOf, describedFor, recordAudit } from '../audit/audit-log.repository';
import { accountScope } from '../authorization';
import type { Viewer } from '../auth/viewer';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../errors';
import { parseId } from '../ids';
import { fromTheEnd, type PageSource } from '../pagination';
import type { EndpointPolicy } from './endpoint-guard';
import { newSigningSecret, SIGNING_ALGORITHM, unreadableSecretMessage, type SigningSecretBox } from './signing-secret';
import type { WebhookFilter, WebhookRecord, WebhookRepository } from './webhook.repository';
import { checkCombination, MAX_WEBHOOKS_PER_ACCOUNT, validateWebhook, type WebhookInput } from './webhook.validation';

export type { WebhookFilter, WebhookRecord } from './webhook.repository';
export type { WebhookInput } from './webhook.validation';

/** A signing secret as Zendesk shows it. */
export interface SigningSecret {
  algorithm: typeof SIGNING_ALGORITHM;
  secret: string;
}

/**
 * Webhooks of the viewer's account (docs/api.md, "Webhooks"): Zendesk's fields, the
 * endpoint guard, at most 50 per account, and a signing secret that is stored sealed
 * and shown on request. Every change runs in one transaction with its audit record,
 * which names fields, never the secret.
 */
export class WebhookService {
  constructor(
    private readonly db: Transactions,
    private readonly webhooks: WebhookRepository,
    private readonly repos: RepositoryFactory,
    private readonly box: SigningSecretBox,
    private readonly policy: EndpointPolicy,
  ) {}

  async find(viewer: Viewer, rawId: unknown): Promise<WebhookRecord | null> {
    const id = parseId(rawId);
    return id === null ? null : this.webhooks.find(accountScope(viewer), id);
  }

  /** The account's webhooks (of the filter), id ascending, in keyset pages (readPage). */
  pages(viewer: Viewer, filter: WebhookFilter = {}): PageSource<WebhookRecord> {
    const text = filter.nameContains;
    // PostgreSQL text cannot hold NUL; a name is at most 255 characters
    if (text !== undefined && (text.includes('\u0000') || text.length > 255)) throw new BadRequestError('The name filter must be at most 255 characters, without NUL');
    const scope = accountScope(viewer);
    return { keyset: (page) => this.webhooks.listKeyset(scope, filter, fromTheEnd(page)), count: () => this.webhooks.count(scope, filter) };
  }

  async create(viewer: Viewer, input: WebhookInput): Promise<WebhookRecord> {
    const fields = await validateWebhook(input, 'create', this.policy);
    const full = fields as Required<typeof fields>;
    checkCombination(full);
    const secret = newSigningSecret();
    return tenantTransaction(this.db, async (sql) => {
      const scope = { ...accountScope(viewer), createdBy: viewer.userId };
      const webhook = await this.repos(sql).webhooks.insert(scope, { ...full, sealedSecret: this.box.seal(viewer.accountId, secret) }, MAX_WEBHOOKS_PER_ACCOUNT);
      if (!webhook) {
        throw new ValidationError({
          webhooks: [{ error: 'InvalidValue', description: `Webhooks: an account has at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one to create another` }],
        });
      }
      await recordAudit(sql, actorOf(viewer), {
        action: 'create', sourceType: 'webhook', sourceId: webhook.id, sourceLabel: webhook.name,
        changedFields: ['name', ...(webhook.description ? ['description'] : []), 'endpoint', 'http_method', 'request_format', 'status', ...(webhook.subscriptions.length ? ['subscriptions'] : []), 'signing_secret'],
        // not the endpoint: its query string may hold a receiver's token
        description: describedFor(viewer, 'Created'),
      });
      return webhook;
    });
  }

  /** `replace` (PUT): every field, omitted optional ones cleared; `patch` (PATCH): the given ones. */
  async update(viewer: Viewer, rawId: unknown, input: WebhookInput, mode: 'replace' | 'patch'): Promise<WebhookRecord> {
    const id = parseId(rawId) ?? notFound();
    const fields = await validateWebhook(input, mode, this.policy);
    return tenantTransaction(this.db, async (sql) => {
      const scope = { ...accountScope(viewer), updatedBy: viewer.userId };
      const { webhook, changed } = (await this.repos(sql).webhooks.update(scope, id, fields)) ?? notFound();
      // on the webhook as it now is: a patch may change the method or the subscriptions alone (rolled back if it fails)
      checkCombination(webhook);
      await recordAudit(sql, actorOf(viewer), {
        action: 'update', sourceType: 'webhook', sourceId: id, sourceLabel: webhook.name, changedFields: changed,
        description: describedFor(viewer, changed.length ? `Changed ${changed.join(', ')}` : 'Saved without changing a field'),
      });
      return webhook;
    });
  }

  async delete(viewer: Viewer, rawId: unknown): Promise<void> {
    const id = parseId(rawId) ?? notFound();
    await tenantTransaction(this.db, async (sql) => {
      const deleted = (await this.repos(sql).webhooks.delete(accountScope(viewer), id)) ?? notFound();
      await recordAudit(sql, actorOf(viewer), { action: 'destroy', sourceType: 'webhook', sourceId: id, sourceLabel: deleted.name, description: describedFor(viewer, 'Deleted') });
    });
  }

  /** The webhook's signing secret, in full (Zendesk's Show Webhook Signing Secret). */
  async signingSecret(viewer: Viewer, rawId: unknown): Promise<SigningSecret> {
    const id = parseId(rawId) ?? notFound();
    const sealed = (await this.webhooks.readSecret(accountScope(viewer), id)) ?? notFound();
    const secret = this.box.open(viewer.accountId, sealed);
    if (secret === null) throw new ConflictError(unreadableSecretMessage(id));
    return { algorithm: SIGNING_ALGORITHM, secret };
  }

  /** A new signing secret; the old one stops signing at once. Audited by name only. */
  async resetSigningSecret(viewer: Viewer, rawId: unknown): Promise<SigningSecret> {
    const id = parseId(rawId) ?? notFound();
    const secret = newSigningSecret();
    return tenantTransaction(this.db, async (sql) => {
      const scope = { ...accountScope(viewer), updatedBy: viewer.userId };
      const webhook = (await this.repos(sql).webhooks.replaceSecret(scope, id, this.box.seal(viewer.accountId, secret))) ?? notFound();
      await recordAudit(sql, actorOf(viewer), {
        action: 'update', sourceType: 'webhook', sourceId: id, sourceLabel: webhook.name, changedFields: ['signing_secret'],
        description: describedFor(viewer, 'Reset the signing secret; the previous one stopped working'),
      });
      return { algorithm: SIGNING_ALGORITHM, secret };
    });
  }
}

function notFound(): never {
  throw new NotFoundError();
}
